// One integration-test stack: the run's shared Temporal dev server (TEMPORAL_ADDRESS, started once by
// scripts/test.ts), a fresh database, the scripted LLM server, and a worker on a task queue of its own.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { submitJob, type SubmitJobInput } from '../../api/job-actions.js';
import { loadConfig, type MaestroConfig } from '../../config/config.js';
import { installRuntime } from '../../infra/stack.js';
import { workflowIdForJob, type JobView } from '../../core/types.js';
import type { Db } from '../../db/database.js';
import { getJob } from '../../db/repositories/index.js';
import type { ToolDefinition } from '../../engine/tools/tool.js';
import { createMaestroWorker } from '../../worker/create-worker.js';
import type { JobWorkflowResult } from '../../core/job-workflow-contract.js';
import { startScriptedLlmServer, type ScriptedResponse, type ScriptHandler } from '../../dev/scripted-llm-server.js';
import { createTestDatabase } from './test-db.js';

export interface TestStack {
  config: MaestroConfig;
  db: Db;
  client: Client;
  llm: Awaited<ReturnType<typeof startScriptedLlmServer>>;
  home: string;
  worker: Worker | null;
  /** The test database's URL, for workers in other processes. */
  databaseUrl: string;
  submit(input: Partial<SubmitJobInput> & { instruction?: string }): Promise<JobView>;
  /** Waits for the workflow to end; returns its result (or the failure) and the job row. */
  finish(jobId: string): Promise<{ result?: JobWorkflowResult; failure?: Error; job: JobView }>;
  stop(): Promise<void>;
}

export function temporalAddress(): string {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS is not set: run integration tests through `npm test`');
  return address;
}

export async function startTestStack(opts: {
  script: ScriptedResponse[] | ScriptHandler;
  env?: Record<string, string>;
  /** false: no worker in this process (the test runs its own, e.g. in a child process). */
  worker?: boolean;
  /** Test-only tools offered to every job (after the built-in ones), e.g. a stand-in browser tool. */
  extraTools?: ToolDefinition[];
}): Promise<TestStack> {
  const address = temporalAddress();
  installRuntime(loadConfig().logLevel);
  const home = await mkdtemp(path.join(os.tmpdir(), 'maestro-test-'));
  const database = await createTestDatabase();
  const llm = await startScriptedLlmServer({ script: opts.script });
  const config = loadConfig({
    TEMPORAL_ADDRESS: address,
    MAESTRO_TASK_QUEUE: `test-${randomUUID()}`,
    MAESTRO_LLM_BASE_URL: llm.url,
    MAESTRO_LLM_API_KEY: 'test-key',
    MAESTRO_LLM_MODEL: 'scripted',
    MAESTRO_HOME: home,
    // Tests put other workspaces beside the jobs' own (home/other-project): the whole home is a root.
    MAESTRO_WORKSPACE_ROOTS: home,
    ...opts.env,
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const native = await NativeConnection.connect({ address });
  const worker = opts.worker === false ? null : await createMaestroWorker({ config, db: database.db, connection: native, extraTools: opts.extraTools });
  const running = worker?.run();

  return {
    config,
    db: database.db,
    client,
    llm,
    home,
    worker,
    databaseUrl: database.url,
    submit: (input) =>
      submitJob(
        { db: database.db, client, config },
        { piece: input.pieceYaml ? undefined : (input.piece ?? 'develop'), instruction: 'do the task', ...input },
      ),
    async finish(jobId) {
      const handle = client.workflow.getHandle(workflowIdForJob(jobId));
      let result: JobWorkflowResult | undefined;
      let failure: Error | undefined;
      try {
        result = (await handle.result()) as JobWorkflowResult;
      } catch (err) {
        if (!(err instanceof WorkflowFailedError)) throw err;
        failure = err;
      }
      const job = await getJob(database.db, jobId);
      if (!job) throw new Error(`job ${jobId} vanished`);
      return { result, failure, job };
    },
    async stop() {
      worker?.shutdown();
      await running;
      await native.close();
      await connection.close();
      await llm.stop();
      await database.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}
