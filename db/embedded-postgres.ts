// Embedded PostgreSQL for dev, demo and tests: PGlite (Postgres compiled to WASM, in this process)
// served over the Postgres wire protocol, so the rest of the code uses plain `pg` either way.
//
// PGlite is ONE backend session. db/pglite-wire-server.ts hands it to one connection at a time, per
// query or per transaction, so several connections (another process's worker, psql) are safe.
// Still prefer poolSize 1 per process (createDatabase({ url, poolSize: 1 })): more connections
// cannot run anything in parallel, and session state (SET, temp tables) is shared by all of them.
//
// Any process on the machine can reach a loopback port, so connections need a password: for a
// data folder it is generated on first start and kept next to it (`<dataDir>.password`, mode 0600,
// under MAESTRO_HOME for `maestro dev`); an in-memory database gets a fresh one per start. The URL
// returned carries it, so `pg` connects as before.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { registerSecret } from '../core/redact.js';
import { startPgliteWireServer, type PgliteWireServer } from './pglite-wire-server.js';

/** Default for MAESTRO_EMBEDDED_DB_IDLE_TX_TIMEOUT (seconds). */
export const DEFAULT_IDLE_TX_TIMEOUT_MS = 30_000;

export interface EmbeddedPostgres {
  url: string;
  /** Connections waiting for the single backend right now. */
  waiting(): number;
  stop(): Promise<void>;
}

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** The data folder is already served by another live process (or by this one). */
export class EmbeddedPostgresLockedError extends EmbeddedPostgresError {
  override name = 'EmbeddedPostgresLockedError';
}

export async function startEmbeddedPostgres(opts: {
  /** undefined = in-memory */
  dataDir?: string;
  host?: string;
  /** 0 = a free port */
  port?: number;
  /** Where the password is kept; default `<dataDir>.password`, none (a fresh password) in memory. */
  passwordFile?: string;
  /** A connection idle inside a transaction this long is rolled back and closed (FATAL 25P03). */
  idleInTransactionTimeoutMs?: number;
} = {}): Promise<EmbeddedPostgres> {
  const host = opts.host ?? '127.0.0.1';
  let releaseLock: () => Promise<void> = async () => {};
  let dataDir: string | undefined;
  if (opts.dataDir !== undefined) {
    dataDir = path.resolve(opts.dataDir);
    await fs.mkdir(dataDir, { recursive: true });
    releaseLock = await lockDataDir(dataDir);
  }
  let db: PGlite | undefined;
  let server: PgliteWireServer;
  let password: string;
  try {
    const passwordFile = opts.passwordFile ?? (dataDir === undefined ? undefined : `${dataDir}.password`);
    password = passwordFile === undefined ? newPassword() : await loadOrCreatePassword(passwordFile);
    registerSecret(password);
    db = dataDir === undefined ? await PGlite.create() : await PGlite.create({ dataDir });
    server = await startPgliteWireServer(db, {
      host,
      port: opts.port ?? 0,
      password,
      idleInTransactionTimeoutMs: opts.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_TX_TIMEOUT_MS,
    });
  } catch (err) {
    await db?.close().catch(() => undefined);
    await releaseLock();
    throw new EmbeddedPostgresError(
      `could not start embedded PostgreSQL (${dataDir ?? 'in-memory'}) on ${host}:${opts.port ?? 0}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const port = server.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let stopped: Promise<void> | undefined;
  const pglite = db;
  const socketServer = server;
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@${urlHost}:${port}/postgres?sslmode=disable`,
    waiting: () => socketServer.waiting(),
    stop() {
      stopped ??= (async () => {
        try {
          await socketServer.stop();
          await pglite.close();
        } finally {
          await releaseLock();
        }
      })();
      return stopped;
    },
  };
}

function newPassword(): string {
  return randomBytes(24).toString('base64url');
}

/** The password of a data folder: made once, readable by its owner only. */
async function loadOrCreatePassword(file: string): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  try {
    const fh = await fs.open(file, 'wx', 0o600);
    const password = newPassword();
    try {
      await fh.writeFile(`${password}\n`);
    } finally {
      await fh.close();
    }
    return password;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Tighten a file someone loosened: the password is as good as its file's mode.
  await fs.chmod(file, 0o600);
  const password = (await fs.readFile(file, 'utf8')).trim();
  if (!/^[A-Za-z0-9_-]{16,}$/.test(password)) {
    throw new EmbeddedPostgresError(`the embedded database password file ${file} is malformed; delete it to make a new one`);
  }
  return password;
}

/**
 * PGlite does not guard its data folder; two processes writing it would corrupt it. A lock file
 * next to the folder holds the owner's pid; a lock whose owner is gone is taken over.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockFile = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await fs.open(lockFile, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return async () => {
        await fs.rm(lockFile, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number((await fs.readFile(lockFile, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
      const who = owner === process.pid ? 'this process' : `process ${owner}`;
      throw new EmbeddedPostgresLockedError(
        `the embedded PostgreSQL data folder ${dataDir} is in use by ${who} (lock file ${lockFile}); ` +
          'stop that process, or set DATABASE_URL to share one PostgreSQL server',
      );
    }
    await fs.rm(lockFile, { force: true });
  }
  throw new EmbeddedPostgresLockedError(`could not take the lock ${lockFile} on ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
