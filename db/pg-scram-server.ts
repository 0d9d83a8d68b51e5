// The server side of SCRAM-SHA-256 (RFC 5802/7677, as PostgreSQL speaks it) for the embedded
// database's wire server, with node:crypto only. The password never crosses the wire: the client
// proves it knows it, and the server proves back that it holds the same verifier.
//
// No channel binding (the embedded server refuses SSL, it listens on loopback); a client that
// insists on SCRAM-SHA-256-PLUS is refused. The password is ours (base64url, generated), so the
// SASLprep normalisation that clients apply leaves it unchanged.
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

export const SCRAM_MECHANISM = 'SCRAM-SHA-256';
const ITERATIONS = 4096;

export class ScramError extends Error {
  override name = 'ScramError';
}

/** What the server keeps instead of the password (the same as pg_authid's SCRAM verifier). */
export interface ScramVerifier {
  salt: Buffer;
  iterations: number;
  storedKey: Buffer;
  serverKey: Buffer;
}

export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = ITERATIONS): ScramVerifier {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = hmac(salted, 'Client Key');
  return { salt, iterations, storedKey: sha256(clientKey), serverKey: hmac(salted, 'Server Key') };
}

/** One authentication exchange: clientFirst() -> server-first, clientFinal() -> server-final. */
export class ScramExchange {
  private clientFirstBare = '';
  private serverFirst = '';
  private nonce = '';
  private gs2Header = '';

  constructor(private readonly verifier: ScramVerifier) {}

  /** "n,,n=*,r=<nonce>" -> "r=<nonce+ours>,s=<salt>,i=<n>" */
  clientFirst(message: string): string {
    const m = /^([ny]),(?:a=[^,]*)?,(n=[^,]*,r=([^,]+)(?:,.*)?)$/.exec(message);
    if (!m) throw new ScramError('malformed SCRAM client-first-message (channel binding is not supported)');
    this.gs2Header = `${m[1]},,`;
    this.clientFirstBare = m[2];
    this.nonce = m[3] + randomBytes(18).toString('base64');
    this.serverFirst = `r=${this.nonce},s=${this.verifier.salt.toString('base64')},i=${this.verifier.iterations}`;
    return this.serverFirst;
  }

  /** "c=biws,r=<nonce>,p=<proof>" -> "v=<server signature>", or a ScramError if the proof is wrong. */
  clientFinal(message: string): string {
    const m = /^(c=([^,]*),r=([^,]*)(?:,[^p][^,]*)*),p=([A-Za-z0-9+/=]+)$/.exec(message);
    if (!m || this.serverFirst === '') throw new ScramError('malformed SCRAM client-final-message');
    const [, withoutProof, binding, nonce, proofText] = m;
    if (binding !== Buffer.from(this.gs2Header).toString('base64')) throw new ScramError('SCRAM channel binding mismatch');
    if (nonce !== this.nonce) throw new ScramError('SCRAM nonce mismatch');
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const proof = Buffer.from(proofText, 'base64');
    const signature = hmac(this.verifier.storedKey, authMessage);
    if (proof.length !== signature.length) throw new ScramError('SCRAM proof has the wrong length');
    const clientKey = Buffer.alloc(proof.length);
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i] ^ signature[i];
    if (!timingSafeEqual(sha256(clientKey), this.verifier.storedKey)) throw new ScramError('SCRAM proof does not match');
    return `v=${hmac(this.verifier.serverKey, authMessage).toString('base64')}`;
  }
}

function hmac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}
