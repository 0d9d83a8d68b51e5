// Parks are durable and cheap: a parked job survives a worker restart and a Temporal dev-server
// restart on the same SQLite file, then resumes on a reply; 200 parked jobs hold no activity slot.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { addUserComment, submitJob } from '../../api/job-actions.js';
import { loadConfig, type MaestroConfig } from '../../config/config.js';
import { workflowIdForJob } from '../../core/types.js';
import type { Db } from '../../db/database.js';
import { getJob, listJobs } from '../../db/repositories/index.js';
import { ensureTemporalCli } from '../../infra/temporal-cli.js';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-dev-server.js';
import { createMaestroWorker } from '../../worker/create-worker.js';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { startScriptedLlmServer } from '../../dev/scripted-llm-server.js';
import { createTestDatabase } from '../helpers/test-db.js';
import { startTestStack, temporalAddress } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const PIECE = `
name: park-test
initial_movement: work
max_movements: 5
system_prompt: You test parks.
movements:
  - name: work
    instruction: Ask first, then finish.
    allowed_tools: [Glob]
    rules: []
    default_next: COMPLETE
`;

const firstUser = (req: RecordedRequest) =>
  String((req.body.messages as Array<{ role: string; content?: unknown }>).find((m) => m.role === 'user')?.content ?? '');

/** Asks until a person has said "carry on" (or the job is tagged to finish at once). */
function script(req: RecordedRequest): ScriptedResponse {
  const prompt = firstUser(req);
  if (prompt.includes('carry on') || prompt.includes('[no-ask]')) {
    return { toolCalls: [{ name: 'complete', arguments: { status: 'done', summary: 'carried on' } }] };
  }
  return { toolCalls: [{ name: 'complete', arguments: { status: 'needs_user_input', summary: 'asking', question: 'May I carry on?' } }] };
}

interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}

async function runWorker(config: MaestroConfig, db: Db, connection: NativeConnection, options?: { maxActivities?: number }): Promise<RunningWorker> {
  const worker = await createMaestroWorker({
    config,
    db,
    connection,
    ...(options?.maxActivities ? { options: { maxConcurrentActivityTaskExecutions: options.maxActivities } } : {}),
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

const waitForStatus = (db: Db, id: string, status: string, timeoutMs = 30_000) =>
  waitFor(async () => (await getJob(db, id))?.status === status, { timeoutMs, message: `job ${id} never became ${status}` });

describe('park durability', () => {
  test('a parked job survives a worker restart and resumes on a reply sent while no worker ran', async () => {
    const stack = await startTestStack({ script, worker: false });
    const native = await NativeConnection.connect({ address: temporalAddress() });
    let second: RunningWorker | undefined;
    try {
      const first = await runWorker(stack.config, stack.db, native);
      const job = await stack.submit({ pieceYaml: PIECE, instruction: 'park, then restart the worker' });
      await waitForStatus(stack.db, job.id, 'waiting_human');
      await first.stop();
      assert.equal(first.worker.getState(), 'STOPPED');

      // Stored, then signalled: Temporal keeps the signal until a worker picks the workflow up.
      const reply = await addUserComment({ db: stack.db, client: stack.client, config: stack.config }, job.id, 'yes, carry on');
      assert.equal(reply.signalled, true);
      second = await runWorker(stack.config, stack.db, native);
      const { result, job: row } = await stack.finish(job.id);
      assert.equal(result?.status, 'completed');
      assert.equal(row.summary, 'carried on');
      assert.equal(stack.llm.requests.length, 2, 'one movement run before the restart, one after');
    } finally {
      await second?.stop();
      await native.close();
      await stack.stop();
    }
  });

  test('a parked job survives a Temporal dev-server restart on the same SQLite file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-durability-'));
    const dbFile = path.join(dir, 'temporal.db');
    const cliPath = await ensureTemporalCli(loadConfig().home, () => {});
    const logFile = path.join(dir, 'temporal.log');
    let server: TemporalDevServer | undefined = await startTemporalDevServer({ cliPath, port: 0, dbFile, headless: true, logFile });
    const port = Number(server.address.slice(server.address.lastIndexOf(':') + 1));
    const database = await createTestDatabase();
    const llm = await startScriptedLlmServer({ script });
    const config = loadConfig({
      TEMPORAL_ADDRESS: server.address,
      MAESTRO_TASK_QUEUE: `test-${randomUUID()}`,
      MAESTRO_LLM_BASE_URL: llm.url,
      MAESTRO_LLM_API_KEY: 'test-key',
      MAESTRO_LLM_MODEL: 'scripted',
      MAESTRO_HOME: dir,
    });
    let link: Awaited<ReturnType<typeof connect>> | undefined;
    async function connect() {
      const connection = await Connection.connect({ address: config.temporal.address });
      const client = new Client({ connection, namespace: config.temporal.namespace });
      const native = await NativeConnection.connect({ address: config.temporal.address });
      const worker = await runWorker(config, database.db, native);
      return {
        client,
        async close() {
          await worker.stop();
          await native.close();
          await connection.close();
        },
      };
    }
    try {
      link = await connect();
      const job = await submitJob({ db: database.db, client: link.client, config }, { piece: undefined, pieceYaml: PIECE, instruction: 'park, then restart Temporal' });
      await waitForStatus(database.db, job.id, 'waiting_human');
      const before = await link.client.workflow.getHandle(job.workflowId).describe();

      await link.close();
      link = undefined;
      await server.stop();
      server = await startTemporalDevServer({ cliPath, port, dbFile, headless: true, logFile });
      assert.equal(server.address, config.temporal.address, 'same address after the restart');
      link = await connect();

      const handle = link.client.workflow.getHandle(job.workflowId);
      const after = await handle.describe();
      assert.equal(after.runId, before.runId, 'the same workflow run survived the restart');
      assert.equal(after.status.name, 'RUNNING');
      assert.deepEqual(after.searchAttributes.MaestroWaitReason, ['question']);
      const reply = await addUserComment({ db: database.db, client: link.client, config }, job.id, 'please carry on');
      assert.equal(reply.signalled, true);
      const result = (await handle.result()) as { status: string };
      assert.equal(result.status, 'completed');
      assert.equal((await getJob(database.db, job.id))?.status, 'completed');
    } finally {
      await link?.close();
      await server?.stop();
      await llm.stop();
      await database.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('200 parked jobs hold no activity slot: a new job still completes on a 2-slot worker', async () => {
    const COUNT = 200;
    const stack = await startTestStack({ script, worker: false });
    const native = await NativeConnection.connect({ address: temporalAddress() });
    let worker: RunningWorker | undefined;
    const ids: string[] = [];
    try {
      worker = await runWorker(stack.config, stack.db, native, { maxActivities: 2 });
      const started = Date.now();
      for (let i = 0; i < COUNT; i += 10) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(10, COUNT - i) }, (_, k) => stack.submit({ pieceYaml: PIECE, instruction: `parked job ${i + k}` })),
        );
        ids.push(...batch.map((j) => j.id));
      }
      await waitFor(async () => (await listJobs(stack.db, { status: ['waiting_human'], limit: COUNT + 1 })).length === COUNT, {
        timeoutMs: 150_000,
        intervalMs: 500,
        message: `not all ${COUNT} jobs parked`,
      });
      const parkedAfterMs = Date.now() - started;
      await waitFor(() => worker!.worker.getStatus().numInFlightActivities === 0, { message: 'activities still in flight after the parks' });

      for (const id of ids.filter((_, i) => i % 20 === 0)) {
        const desc = await stack.client.workflow.getHandle(workflowIdForJob(id)).describe();
        assert.equal(desc.status.name, 'RUNNING');
        assert.equal(desc.raw.pendingActivities?.length ?? 0, 0, `job ${id} holds no activity while parked`);
      }
      const query = `MaestroWaitReason="question" AND TaskQueue="${stack.config.temporal.taskQueue}"`;
      await waitFor(async () => (await stack.client.workflow.count(query)).count === COUNT, {
        timeoutMs: 30_000,
        intervalMs: 250,
        message: `visibility never listed ${COUNT} jobs for ${query}`,
      });

      const fresh = await stack.submit({ pieceYaml: PIECE, instruction: '[no-ask] runs past the parked ones' });
      const { result } = await stack.finish(fresh.id);
      assert.equal(result?.status, 'completed');
      console.log(`# ${COUNT} jobs parked in ${parkedAfterMs} ms on a worker with 2 activity slots`);
    } finally {
      // Parked workflows would wait forever on the shared dev server: end them without running anything.
      for (let i = 0; i < ids.length; i += 25) {
        await Promise.all(ids.slice(i, i + 25).map((id) => stack.client.workflow.getHandle(workflowIdForJob(id)).terminate('test over').catch(() => undefined)));
      }
      await worker?.stop();
      await native.close();
      await stack.stop();
    }
  });
});
