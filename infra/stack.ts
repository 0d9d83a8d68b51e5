// Starts the parts a process needs, in order, and stops them in reverse: the Temporal dev server,
// the database (DATABASE_URL, or embedded PGlite on the Postgres wire protocol), the worker, the API.
// Used by `maestro dev`, `maestro worker`, `maestro api` and the demo.
import { Client, Connection } from '@temporalio/client';
import { formatWithOptions } from 'node:util';
import { DefaultLogger, NativeConnection, Runtime, type LogEntry, type LogLevel, type Worker } from '@temporalio/worker';
import { createApiApp } from '../api/app.js';
import { startApiServer } from '../api/server.js';
import { ensureApiToken, readApiTokenFileSync, type ApiTokenInfo } from '../config/api-token.js';
import { homePaths, type MaestroConfig } from '../config/config.js';
import { redactSecrets, registerSecret, registerSecretsFromConfig } from '../core/redact.js';
import { createDatabase, destroyDatabase, migrateToLatest, type Db } from '../db/database.js';
import { startEmbeddedPostgres } from '../db/embedded-postgres.js';
import type { LlmClient } from '../engine/llm-client.js';
import { createMaestroWorker } from '../worker/create-worker.js';
import { Sandbox, UNSANDBOXED_WARNING } from '../engine/sandbox/index.js';
import { ensureTemporalCli } from './temporal-cli.js';
import { startTemporalDevServer } from './temporal-dev-server.js';

export interface StackOptions {
  config: MaestroConfig;
  /** 'start' runs a dev server at TEMPORAL_ADDRESS; 'connect' uses one that is already there. */
  temporal?: 'start' | 'connect';
  worker?: boolean;
  api?: boolean;
  llm?: LlmClient;
  log?: (line: string) => void;
}

export interface Stack {
  config: MaestroConfig;
  db: Db;
  client: Client;
  apiUrl?: string;
  /** Where the API's token came from (MAESTRO_API_TOKEN or MAESTRO_HOME/api-token), when serving it. */
  apiToken?: Pick<ApiTokenInfo, 'source' | 'file'>;
  temporalUiUrl?: string;
  databaseLabel: string;
  stop(): Promise<void>;
}

export class StackStartError extends Error {
  override name = 'StackStartError';
}

let runtimeInstalled = false;

/** The Temporal SDK's own log (webpack, worker states) at MAESTRO_LOG_LEVEL (WARN by default). */
export function installRuntime(level: LogLevel): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    // The SDK logs failed activities with their errors: the text goes through the redactor.
    const write = (entry: LogEntry) =>
      process.stderr.write(
        redactSecrets(`${new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString()} [${entry.level}] ${entry.message}` +
          (entry.meta === undefined ? '' : ` ${formatWithOptions({ depth: 4 }, entry.meta)}`)) + '\n',
      );
    Runtime.install({ logger: new DefaultLogger(level, write) });
  } catch {
    // Already installed by the embedding program (tests, another stack): keep its logger.
  }
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const { config } = opts;
  installRuntime(config.logLevel);
  registerSecretsFromConfig(config);
  registerSecret(readApiTokenFileSync(config.home));
  const rawLog = opts.log ?? (() => {});
  const log = (line: string) => rawLog(redactSecrets(line));
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch((err) => log(`shutdown: ${(err as Error).message}`));
    stops.length = 0;
  };
  try {
    let temporalUiUrl: string | undefined;
    if (opts.temporal === 'start') {
      const cliPath = await ensureTemporalCli(config.home, log);
      const [host, portText] = splitAddress(config.temporal.address);
      const port = Number(portText);
      const server = await startTemporalDevServer({
        cliPath,
        host,
        port,
        uiPort: port + 1000,
        dbFile: homePaths(config.home).temporalDb,
        namespace: config.temporal.namespace,
      });
      stops.push(() => server.stop());
      temporalUiUrl = server.uiUrl ?? undefined;
    }

    let url = config.databaseUrl;
    let databaseLabel = 'PostgreSQL (DATABASE_URL)';
    if (!url) {
      const embedded = await startEmbeddedPostgres({
        dataDir: homePaths(config.home).pgdata,
        idleInTransactionTimeoutMs: config.embeddedDbIdleTxTimeoutSeconds * 1000,
      });
      stops.push(() => embedded.stop());
      url = embedded.url;
      databaseLabel = `embedded PGlite (${homePaths(config.home).pgdata}) at ${embedded.url.replace(/\/\/[^@]*@/, '//')}`;
    }
    // Embedded PGlite must see one connection per process (see db/embedded-postgres.ts).
    const db = createDatabase({ url, poolSize: config.databaseUrl ? 10 : 1 });
    stops.push(() => destroyDatabase(db));
    await migrateToLatest(db);

    const connection = await Connection.connect({ address: config.temporal.address });
    stops.push(() => connection.close());
    const client = new Client({ connection, namespace: config.temporal.namespace });

    if (opts.worker) {
      const sandboxProblem = await describeSandboxAtStart(config);
      if (sandboxProblem) log(sandboxProblem);
      const nativeConnection = await NativeConnection.connect({ address: config.temporal.address });
      stops.push(() => nativeConnection.close());
      const worker = await createMaestroWorker({ config, db, connection: nativeConnection, llm: opts.llm });
      const running = runWorker(worker, log);
      stops.push(async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      });
    }

    let apiUrl: string | undefined;
    let apiToken: Stack['apiToken'];
    if (opts.api) {
      // Never an API without a token: the operator's, or the one kept in MAESTRO_HOME/api-token.
      // Written back into config so in-process clients (the demo) send it.
      const info = await ensureApiToken(config.home, config.api.token);
      config.api.token = info.token;
      registerSecret(info.token);
      apiToken = { source: info.source, file: info.file };
      const server = await startApiServer(createApiApp({ db, client, config }), {
        host: config.api.host,
        port: config.api.port,
        allowedHosts: config.api.allowedHosts,
        publicUrl: config.api.url,
      });
      stops.push(() => server.stop());
      apiUrl = server.url;
    }
    return { config, db, client, apiUrl, apiToken, temporalUiUrl, databaseLabel, stop };
  } catch (err) {
    await stop();
    throw err instanceof StackStartError ? err : new StackStartError((err as Error).message, { cause: err });
  }
}

/** What a person starting a worker must know about its tool sandbox, or null when all is well. */
async function describeSandboxAtStart(config: MaestroConfig): Promise<string | null> {
  if (config.sandbox.mode === 'none') return UNSANDBOXED_WARNING;
  const why = await new Sandbox(config.sandbox).unavailableReason();
  return why ? `WARNING: Bash, git status and package installs will answer with an error until this is fixed: ${why}` : null;
}

function runWorker(worker: Worker, log: (line: string) => void): Promise<void> {
  return worker.run().catch((err) => log(`worker stopped with an error: ${(err as Error).message}`));
}

export function splitAddress(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  if (i <= 0) throw new StackStartError(`TEMPORAL_ADDRESS must be host:port, got "${address}"`);
  return [address.slice(0, i), address.slice(i + 1)];
}
