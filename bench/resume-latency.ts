// npm run bench:resume: how long a parked job takes to get going again. On a Temporal dev server
// (SQLite file, as `maestro dev` runs it), embedded PGlite, a worker and the HTTP API, a job parks on
// a question; we time the reply's API call (POST /api/jobs/:id/comments over real HTTP) to the
// resumed movement's first LLM request reaching the scripted model. Beside it, in the same run and
// on the same server, the floor: signal -> activity start of a no-op workflow (bench/noop-workflow.ts).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { submitJob } from '../api/job-actions.js';
import { loadConfig, type MaestroConfig } from '../config/config.js';
import type { Db } from '../db/database.js';
import { getJob, listEvents } from '../db/repositories/index.js';
import { getFreePort } from '../infra/ports.js';
import { startStack } from '../infra/stack.js';
import { ensureTemporalCli } from '../infra/temporal-cli.js';
import { startTemporalDevServer } from '../infra/temporal-dev-server.js';
import { startScriptedLlmServer, type RecordedRequest, type ScriptedResponse } from '../dev/scripted-llm-server.js';
import { goSignal, noopSignalWorkflow, type NoopActivities } from './noop-workflow.js';

const SAMPLES = 20;
const WARMUP = 3;
const POLL_MS = 10;

const PIECE = `
name: resume-bench
initial_movement: work
max_movements: 5
system_prompt: You are timed.
movements:
  - name: work
    instruction: Ask one question, then finish.
    allowed_tools: [Glob]
    rules: []
    default_next: COMPLETE
`;

/** Resolvers keyed by sample tag: the scripted model calls them when a resumed movement's first request arrives. */
const resumedAt = new Map<string, (t: number) => void>();
const noopStartedAt = new Map<number, (t: number) => void>();

function model(req: RecordedRequest): ScriptedResponse {
  const messages = req.body.messages as Array<{ role: string; content?: unknown }>;
  const prompt = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const tag = /\[(s\d+)\]/.exec(prompt)?.[1] ?? '';
  if (prompt.includes(`reply-${tag}`)) {
    resumedAt.get(tag)?.(performance.now());
    return { toolCalls: [{ name: 'complete', arguments: { status: 'done', summary: 'resumed' } }] };
  }
  return { toolCalls: [{ name: 'complete', arguments: { status: 'needs_user_input', summary: 'asking', question: 'Go on?' } }] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until the workflow sits in its wait: nothing scheduled, no workflow task pending. */
async function untilIdle(client: Client, workflowId: string, ready: () => Promise<boolean> = async () => true): Promise<void> {
  for (;;) {
    const d = await client.workflow.getHandle(workflowId).describe();
    if ((d.raw.pendingActivities?.length ?? 0) === 0 && !d.raw.pendingWorkflowTask && d.historyLength >= 3 && (await ready())) return;
    await sleep(POLL_MS);
  }
}

interface MaestroSample {
  total: number;
  /** reply -> status 'running' recorded -> movement started -> first LLM request (ms, from job events). */
  steps: [number, number, number];
}

async function maestroSample(i: number, db: Db, client: Client, config: MaestroConfig, apiUrl: string): Promise<MaestroSample> {
  const tag = `s${i}`;
  const token = config.api.token;
  const job = await submitJob({ db, client, config }, { piece: undefined, pieceYaml: PIECE, instruction: `[${tag}] time my resume` });
  await untilIdle(client, job.workflowId, async () => (await getJob(db, job.id))?.status === 'waiting_human');
  const resumed = new Promise<number>((resolve) => resumedAt.set(tag, resolve));
  const replyWall = Date.now();
  const t0 = performance.now();
  const res = await fetch(`${apiUrl}/api/jobs/${job.id}/comments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ body: `reply-${tag}: go on` }),
  });
  if (res.status !== 201) throw new Error(`reply answered ${res.status}: ${await res.text()}`);
  const t1 = await resumed;
  await client.workflow.getHandle(job.workflowId).result();
  const events = await listEvents(db, job.id);
  const at = (pred: (e: (typeof events)[number]) => boolean) => Date.parse(events.filter(pred).at(-1)?.createdAt ?? '') - replyWall;
  const running = at((e) => e.type === 'job.status' && e.data.status === 'running');
  const started = at((e) => e.type === 'movement.started');
  return { total: t1 - t0, steps: [running, started - running, t1 - t0 - started] };
}

async function noopSample(i: number, client: Client, taskQueue: string): Promise<number> {
  const workflowId = `bench-noop-${randomUUID()}`;
  const handle = await client.workflow.start(noopSignalWorkflow, { taskQueue, workflowId, args: [i] });
  await untilIdle(client, workflowId);
  const started = new Promise<number>((resolve) => noopStartedAt.set(i, resolve));
  const t0 = performance.now();
  await handle.signal(goSignal);
  const t1 = await started;
  await handle.result();
  return t1 - t0;
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p: number) => s[Math.max(0, Math.ceil(p * s.length) - 1)]!;
  return { median: rank(0.5), p90: rank(0.9), min: s[0]!, max: s.at(-1)! };
}
const ms = (x: number) => `${x.toFixed(1)} ms`;
const median = (xs: number[]) => stats(xs).median;

async function main(): Promise<number> {
  const base = loadConfig();
  const home = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-resume-'));
  const cliPath = await ensureTemporalCli(base.home, (l) => console.error(l));
  const temporal = await startTemporalDevServer({ cliPath, port: 0, headless: true, dbFile: path.join(home, 'temporal.db') });
  const llm = await startScriptedLlmServer({ script: model });
  const config = loadConfig({
    ...process.env,
    TEMPORAL_ADDRESS: temporal.address,
    MAESTRO_HOME: home,
    MAESTRO_LLM_BASE_URL: llm.url,
    MAESTRO_API_HOST: '127.0.0.1',
    MAESTRO_API_PORT: String(await getFreePort()),
    MAESTRO_API_URL: '',
    DATABASE_URL: '',
  });
  const stack = await startStack({ config, temporal: 'connect', worker: true, api: true });
  const native = await NativeConnection.connect({ address: temporal.address });
  const noopQueue = `bench-noop-${randomUUID()}`;
  const activities: NoopActivities = {
    async noop(sample) {
      noopStartedAt.get(sample)?.(performance.now());
    },
  };
  const noopWorker = await Worker.create({
    connection: native,
    taskQueue: noopQueue,
    workflowsPath: fileURLToPath(new URL('./noop-workflow.ts', import.meta.url)),
    activities,
  });
  const noopRunning = noopWorker.run();
  try {
    const maestro: MaestroSample[] = [];
    const floor: number[] = [];
    // Interleaved, so drift (disk, GC, the dev server's own work) hits both series alike.
    for (let i = 0; i < WARMUP + SAMPLES; i += 1) {
      const m = await maestroSample(i, stack.db, stack.client, config, stack.apiUrl!);
      const f = await noopSample(i, stack.client, noopQueue);
      if (i < WARMUP) continue;
      maestro.push(m);
      floor.push(f);
      console.error(`sample ${i - WARMUP + 1}/${SAMPLES}: resume ${ms(m.total)}, floor ${ms(f)}`);
    }
    const r = stats(maestro.map((m) => m.total));
    const f = stats(floor);
    console.log(`\nresume latency on ${temporal.address} (dev server, SQLite), embedded PGlite, scripted model, ${SAMPLES} samples after ${WARMUP} warm-up`);
    console.log(`  reply API call -> resumed movement's first LLM request:  median ${ms(r.median)}  p90 ${ms(r.p90)}  (min ${ms(r.min)}, max ${ms(r.max)})`);
    console.log(`  floor: signal -> no-op activity start (same server):    median ${ms(f.median)}  p90 ${ms(f.p90)}  (min ${ms(f.min)}, max ${ms(f.max)})`);
    console.log(`  ratio resume / floor:  median ${(r.median / f.median).toFixed(2)}x   p90 ${(r.p90 / f.p90).toFixed(2)}x`);
    const step = (k: 0 | 1 | 2) => ms(median(maestro.map((m) => m.steps[k])));
    console.log(`  where the resume goes (medians, ms-resolution event times): reply -> 'running' recorded ${step(0)}, -> movement started ${step(1)}, -> first LLM request ${step(2)}`);
    return 0;
  } finally {
    noopWorker.shutdown();
    await noopRunning;
    await native.close();
    await stack.stop();
    await llm.stop();
    await temporal.stop();
    await rm(home, { recursive: true, force: true });
  }
}

process.exitCode = await main();
