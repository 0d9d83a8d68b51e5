// Serves one PGlite instance over the Postgres wire protocol, safely for several client connections,
// and only to clients that know the password.
//
// Why not pglite-socket's PGLiteSocketServer: it queues work per protocol *message*, so two
// connections using the extended protocol (Parse/Bind/Execute/Sync, which pg uses for every
// parameterised query) interleave, and one connection's Bind meets the other's unnamed statement
// (measured: with a pg pool of 4 a count(*) came back with no row at all); and its handler
// accepts anyone. Here a connection holds the single backend from its first message until the
// backend is idle again (after a Sync or a simple Query, or the startup, with no transaction
// open), so transactions serialise across connections, as one PGlite session demands
// (db/pglite-backend-scheduler.ts). Three ways one client could stall all others are closed:
// - a client that disconnects while it waits for the backend is dropped from the queue at once;
// - a client that holds the backend idle (BEGIN, then nothing) longer than idleInTransactionTimeoutMs
//   gets FATAL 25P03, is rolled back and disconnected, as PostgreSQL's
//   idle_in_transaction_session_timeout does;
// - a client that never finishes authenticating is cut off; it never held the backend anyway.
// Authentication is SCRAM-SHA-256 (db/pg-scram-server.ts) before the startup reaches PGlite.
//
// Limits that remain (PGlite is ONE session): session state is shared by all connections (SET,
// temporary tables, named prepared statements).
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { BackendGoneError, BackendScheduler } from './pglite-backend-scheduler.js';
import { SCRAM_MECHANISM, ScramError, ScramExchange, scramVerifier, type ScramVerifier } from './pg-scram-server.js';

const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const MAX_STARTUP_LENGTH = 10_000;
const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'
const PASSWORD = 0x70; // 'p': SASLInitialResponse and SASLResponse
const AUTH_SASL = 10;
const AUTH_SASL_CONTINUE = 11;
const AUTH_SASL_FINAL = 12;

export interface PgliteWireServerOptions {
  host: string;
  port: number;
  password: string;
  /** A connection that holds the backend without sending anything for this long is rolled back and closed. */
  idleInTransactionTimeoutMs: number;
  /** A connection must have authenticated within this time. */
  authTimeoutMs?: number;
}

export interface PgliteWireServer {
  host: string;
  port: number;
  /** Connections waiting for the backend right now (for tests and diagnostics). */
  waiting(): number;
  stop(): Promise<void>;
}

export async function startPgliteWireServer(db: PGlite, opts: PgliteWireServerOptions): Promise<PgliteWireServer> {
  const scheduler = new BackendScheduler(db);
  const verifier = scramVerifier(opts.password);
  const connections = new Set<WireConnection>();
  const server = net.createServer((socket) => {
    const conn = new WireConnection(socket, scheduler, verifier, opts);
    connections.add(conn);
    void conn.done.then(() => connections.delete(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host, port: opts.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;
  return {
    host: opts.host,
    port: addr.port,
    waiting: () => scheduler.queueLength,
    async stop() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...connections].map((c) => c.shutdown()));
      await closed;
    },
  };
}

type Phase = 'startup' | 'sasl-initial' | 'sasl-final' | 'ready' | 'closed';

class WireConnection {
  private buffer = Buffer.alloc(0);
  private phase: Phase = 'startup';
  private chunks: Buffer[] = [];
  private chunkBytes = 0;
  private work: Promise<void> = Promise.resolve();
  private startupMessage: Buffer | undefined;
  private user = '';
  private scram: ScramExchange | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly authTimer: NodeJS.Timeout;
  private closing: Promise<void> | undefined;
  private resolveDone!: () => void;
  /** Settles once the connection is closed and has handed the backend on. */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));

  constructor(
    private readonly socket: net.Socket,
    private readonly scheduler: BackendScheduler,
    private readonly verifier: ScramVerifier,
    private readonly opts: PgliteWireServerOptions,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      if (this.phase === 'closed') return;
      this.clearIdleTimer();
      this.chunks.push(chunk);
      this.chunkBytes += chunk.length;
      this.work = this.work.then(() => this.drain());
    });
    socket.on('error', () => void this.shutdown());
    socket.on('close', () => void this.shutdown());
    this.authTimer = setTimeout(
      () => void this.shutdown(errorResponse('08P01', 'authentication did not complete in time')),
      opts.authTimeoutMs ?? 10_000,
    );
    this.authTimer.unref();
  }

  /** Closes the connection: leaves the queue now, then rolls back what it left open. Idempotent. */
  shutdown(lastWords?: Buffer): Promise<void> {
    if (this.closing) return this.closing;
    this.phase = 'closed';
    clearTimeout(this.authTimer);
    this.clearIdleTimer();
    this.scheduler.cancel(this);
    if (lastWords && this.socket.writable) {
      this.socket.end(lastWords);
      // Give the error a moment to reach the client; the FIN follows it either way.
      setTimeout(() => this.socket.destroy(), 1_000).unref();
    } else {
      this.socket.destroy();
    }
    this.closing = (async () => {
      await this.work;
      await this.scheduler.abandon(this);
      this.resolveDone();
    })();
    return this.closing;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (this.phase === 'closed') return;
        const message = this.nextMessage();
        if (message === undefined) break;
        await this.handle(message);
      }
      if (this.phase === 'ready' && this.scheduler.isHeldBy(this)) this.armIdleTimer();
    } catch (err) {
      if (err instanceof BackendGoneError) return;
      const code = err instanceof ScramError ? '28P01' : err instanceof ProtocolError ? '08P01' : 'XX000';
      const text = err instanceof ScramError ? `password authentication failed for user "${this.user}"` : (err as Error).message;
      void this.shutdown(errorResponse(code, text));
    }
  }

  /**
   * Whether `n` bytes have arrived; the chunks are joined only then, so a large message costs one
   * copy, not one per chunk.
   */
  private have(n: number): boolean {
    if (this.buffer.length >= n) return true;
    if (this.buffer.length + this.chunkBytes < n) return false;
    this.buffer = Buffer.concat([this.buffer, ...this.chunks]);
    this.chunks = [];
    this.chunkBytes = 0;
    return true;
  }

  /** The next complete message, or undefined until more bytes arrive. */
  private nextMessage(): Buffer | undefined {
    const untyped = this.phase === 'startup';
    const header = untyped ? 4 : 5;
    if (!this.have(header)) return undefined;
    const length = untyped ? this.buffer.readInt32BE(0) : this.buffer.readInt32BE(1) + 1;
    // Until the client has authenticated, no message may be large: it must not make us buffer.
    if (length < header || (this.phase !== 'ready' && length > MAX_STARTUP_LENGTH)) throw new ProtocolError('invalid message length');
    if (!this.have(length)) return undefined;
    const message = this.buffer.subarray(0, length);
    this.buffer = this.buffer.subarray(length);
    return message;
  }

  private async handle(message: Buffer): Promise<void> {
    switch (this.phase) {
      case 'startup':
        return this.onStartup(message);
      case 'sasl-initial':
        return this.onSaslInitial(message);
      case 'sasl-final':
        return this.onSaslFinal(message);
      case 'ready':
        if (message[0] === TERMINATE) {
          void this.shutdown();
          return;
        }
        return this.runOnBackend(message, message[0] === SYNC || message[0] === QUERY);
      default:
        return;
    }
  }

  private onStartup(message: Buffer): void {
    if (message.length < 8) throw new ProtocolError('invalid startup packet');
    const code = message.readInt32BE(4);
    if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
      this.socket.write('N');
      return;
    }
    if (code === CANCEL_REQUEST) {
      void this.shutdown(); // one session, no backend process to signal
      return;
    }
    if (code !== PROTOCOL_3) throw new ProtocolError(`unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`);
    const fields = message.subarray(8).toString('utf8').split('\0');
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 'user') this.user = fields[i + 1];
    this.startupMessage = Buffer.from(message);
    this.phase = 'sasl-initial';
    this.socket.write(authMessage(AUTH_SASL, Buffer.from(`${SCRAM_MECHANISM}\0\0`)));
  }

  private onSaslInitial(message: Buffer): void {
    if (message[0] !== PASSWORD) throw new ScramError('expected a SASLInitialResponse');
    const end = message.indexOf(0, 5);
    if (end < 0 || message.subarray(5, end).toString() !== SCRAM_MECHANISM) throw new ScramError('unsupported SASL mechanism');
    const length = message.readInt32BE(end + 1);
    const data = message.subarray(end + 5, end + 5 + Math.max(0, length)).toString('utf8');
    this.scram = new ScramExchange(this.verifier);
    const serverFirst = this.scram.clientFirst(data);
    this.phase = 'sasl-final';
    this.socket.write(authMessage(AUTH_SASL_CONTINUE, Buffer.from(serverFirst)));
  }

  private async onSaslFinal(message: Buffer): Promise<void> {
    if (message[0] !== PASSWORD || !this.scram) throw new ScramError('expected a SASLResponse');
    const serverFinal = this.scram.clientFinal(message.subarray(5).toString('utf8'));
    this.socket.write(authMessage(AUTH_SASL_FINAL, Buffer.from(serverFinal)));
    clearTimeout(this.authTimer);
    this.phase = 'ready';
    // PGlite answers the startup with AuthenticationOk, the parameters and ReadyForQuery.
    await this.runOnBackend(this.startupMessage!, true);
  }

  private async runOnBackend(message: Buffer, endsExchange: boolean): Promise<void> {
    await this.scheduler.acquire(this);
    if (this.phase === 'closed') return; // shutdown() rolls back and hands the backend on
    await this.scheduler.run(this, new Uint8Array(message), (data) => {
      if (data.length > 0 && this.socket.writable) this.socket.write(Buffer.from(data));
    });
    if (endsExchange && !this.scheduler.inTransaction()) this.scheduler.release(this);
  }

  private armIdleTimer(): void {
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => {
      if (this.phase !== 'ready' || !this.scheduler.isHeldBy(this)) return;
      void this.shutdown(errorResponse('25P03', 'terminating connection due to idle-in-transaction timeout'));
    }, this.opts.idleInTransactionTimeoutMs);
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

class ProtocolError extends Error {
  override name = 'ProtocolError';
}

function authMessage(kind: number, payload: Buffer): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out[0] = 0x52; // 'R'
  out.writeInt32BE(8 + payload.length, 1);
  out.writeInt32BE(kind, 5);
  payload.copy(out, 9);
  return out;
}

/** A FATAL ErrorResponse, as PostgreSQL sends before it closes a connection. */
function errorResponse(sqlstate: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${sqlstate}\0M${message}\0\0`, 'utf8');
  const out = Buffer.alloc(5 + fields.length);
  out[0] = 0x45; // 'E'
  out.writeInt32BE(4 + fields.length, 1);
  fields.copy(out, 5);
  return out;
}
