// Runs `temporal server start-dev` as a child process (SQLite or in-memory) with Maestro's custom
// search attributes registered, and waits until it really serves the namespace.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../core/types.js';
import { getFreePort, getFreePortPair } from './ports.js';

export interface TemporalDevServerOptions {
  cliPath: string;
  host?: string;
  /** 0 = pick a free port. */
  port?: number;
  /** Default port + 1000 (the CLI's own convention). Ignored when headless. */
  uiPort?: number;
  /** SQLite file; undefined = in-memory. */
  dbFile?: string;
  namespace?: string;
  headless?: boolean;
  logFile?: string;
  /** How long to wait for readiness. */
  startTimeoutMs?: number;
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
  pid: number;
  stop(): Promise<void>;
}

export class TemporalDevServerError extends Error {
  override name = 'TemporalDevServerError';
  constructor(
    message: string,
    readonly outputTail: string,
    options?: { cause?: unknown },
  ) {
    super(outputTail ? `${message}\n--- temporal output (tail):\n${outputTail}` : message, options);
  }
}

export const MAESTRO_SEARCH_ATTRIBUTE_NAMES: string[] = Object.values(SEARCH_ATTRIBUTES);

const RING_BYTES = 64 * 1024;
const STOP_GRACE_MS = 10_000;

/** Keeps the last RING_BYTES of output, for error messages. */
class OutputRing {
  private chunks: Buffer[] = [];
  private size = 0;
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size > RING_BYTES && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }
  tail(lines = 40): string {
    return Buffer.concat(this.chunks).toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }
}

export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const host = opts.host ?? '127.0.0.1';
  const pickPort = (opts.port ?? 0) === 0;
  // A port we picked may be taken before the server binds it; then pick again.
  const attempts = pickPort ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts, host, pickPort);
    } catch (err) {
      const portClash = err instanceof TemporalDevServerError && /address already in use/i.test(err.outputTail);
      if (!portClash || attempt >= attempts) throw err;
    }
  }
}

async function startOnce(opts: TemporalDevServerOptions, host: string, pickPort: boolean): Promise<TemporalDevServer> {
  const headless = opts.headless ?? false;
  const namespace = opts.namespace ?? 'default';
  let port = opts.port ?? 0;
  if (pickPort) port = headless || opts.uiPort !== undefined ? await getFreePort(host) : await getFreePortPair(1000, host);
  const uiPort = opts.uiPort ?? port + 1000;

  const args = ['server', 'start-dev', '--ip', host, '--port', String(port), '--log-level', 'warn'];
  if (headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  if (opts.dbFile !== undefined) {
    await fs.mkdir(path.dirname(path.resolve(opts.dbFile)), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  // The "default" namespace always exists; naming it again is harmless but noisy.
  if (namespace !== 'default') args.push('--namespace', namespace);
  for (const name of MAESTRO_SEARCH_ATTRIBUTE_NAMES) args.push('--search-attribute', `${name}=Keyword`);

  let logStream: WriteStream | undefined;
  if (opts.logFile !== undefined) {
    await fs.mkdir(path.dirname(path.resolve(opts.logFile)), { recursive: true });
    logStream = createWriteStream(opts.logFile, { flags: 'a' });
  }
  const ring = new OutputRing();
  const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const onOutput = (b: Buffer) => {
    ring.push(b);
    logStream?.write(b);
  };
  child.stdout!.on('data', onOutput);
  child.stderr!.on('data', onOutput);

  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  let spawnError: Error | undefined;
  child.once('error', (e) => {
    spawnError = e;
  });

  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await killChild(child, () => exited !== undefined, exitPromise);
      await new Promise<void>((r) => (logStream ? logStream.end(r) : r()));
    })());

  try {
    await waitUntilReady({
      address,
      namespace,
      deadline: Date.now() + (opts.startTimeoutMs ?? 60_000),
      failed: () => {
        if (spawnError) return `could not run ${opts.cliPath}: ${spawnError.message}`;
        if (exited) return `temporal dev server exited early (code ${exited.code}, signal ${exited.signal})`;
        return undefined;
      },
    });
  } catch (err) {
    await stop();
    const message = err instanceof Error ? err.message : String(err);
    throw new TemporalDevServerError(`${message} [${opts.cliPath} ${args.join(' ')}]`, ring.tail(), { cause: err });
  }
  return {
    address,
    uiUrl: headless ? null : `http://${host.includes(':') ? `[${host}]` : host}:${uiPort}`,
    pid: child.pid!,
    stop,
  };
}

async function waitUntilReady(o: { address: string; namespace: string; deadline: number; failed: () => string | undefined }): Promise<void> {
  let lastError = 'not ready';
  while (Date.now() < o.deadline) {
    const failure = o.failed();
    if (failure) throw new Error(failure);
    let connection: Connection | undefined;
    try {
      // lazy + ensureConnected so that a failed attempt can still be closed (no leaked channel).
      connection = Connection.lazy({ address: o.address, connectTimeout: 2_000 });
      await connection.ensureConnected();
      await connection.withDeadline(Date.now() + 5_000, async () => {
        await connection!.workflowService.describeNamespace({ namespace: o.namespace });
        const sa = await connection!.operatorService.listSearchAttributes({ namespace: o.namespace });
        const missing = MAESTRO_SEARCH_ATTRIBUTE_NAMES.filter((n) => !(n in (sa.customAttributes ?? {})));
        if (missing.length > 0) throw new Error(`search attributes not registered yet: ${missing.join(', ')}`);
      });
      return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    } finally {
      await connection?.close().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const failure = o.failed();
  throw new Error(failure ?? `temporal dev server at ${o.address} not ready before the deadline: ${lastError}`);
}

async function killChild(child: ChildProcess, hasExited: () => boolean, exitPromise: Promise<void>): Promise<void> {
  if (hasExited() || child.pid === undefined) return;
  child.kill('SIGTERM');
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_GRACE_MS).unref());
  if ((await Promise.race([exitPromise.then(() => 'exited' as const), timer])) === 'timeout' && !hasExited()) {
    child.kill('SIGKILL');
    await exitPromise;
  }
}
