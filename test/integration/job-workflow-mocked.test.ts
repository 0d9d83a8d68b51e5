// The job workflow's own decisions, with its activities mocked (as Temporal's samples test
// workflows): the ask limit and its deflections, approval expiry by a timer, and max_movements.
// The workflow code is the real bundle on the run's dev server; no database, no model.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';
import type { MovementResult, Piece } from '../../core/types.js';
import { MAX_ASK_LIMIT_DEFLECTIONS } from '../../core/types.js';
import { parsePiece } from '../../engine/piece/piece-loader.js';
import { installRuntime } from '../../infra/stack.js';
import { loadConfig } from '../../config/config.js';
import { WORKFLOWS_PATH } from '../../worker/workflows-path.js';
import { replySignal, type JobWorkflowInput, type JobWorkflowResult } from '../../core/job-workflow-contract.js';
import { temporalAddress } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

type MovementInput = Parameters<Activities['runMovement']>[0];

interface Mocks {
  piece: Piece;
  /** What each runMovement call returns, in order (the last one repeats). */
  results: Array<Partial<MovementResult>>;
  movements: MovementInput[];
  statuses: Array<{ status: string; waitReason: string | null }>;
  expired: string[];
}

/** Activities that act on whichever test's mocks are current (one worker serves the whole file). */
function mockActivities(mocks: () => Mocks): Activities {
  return {
    loadJobPiece: async () => ({ piece: mocks().piece, pieceHash: 'hash' }),
    recordJobStatus: async (s: { status: string; waitReason: string | null }) => {
      mocks().statuses.push({ status: s.status, waitReason: s.waitReason });
    },
    runMovement: async (input: MovementInput) => {
      const m = mocks();
      m.movements.push(input);
      const scripted = m.results[Math.min(m.movements.length - 1, m.results.length - 1)];
      return { movementRunId: input.movementRunId, movement: input.movement, next: null, summary: '', iterations: 1, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, ...scripted };
    },
    expireRequest: async (input: { requestId: string }) => {
      mocks().expired.push(input.requestId);
    },
    describeChildJob: async () => {
      throw new Error('no subtasks in these tests');
    },
  } as unknown as Activities;
}

const pieceWith = (extra: string): Piece =>
  parsePiece(`name: mocked\ninitial_movement: work\nsystem_prompt: s\n${extra}\nmovements:\n  - name: work\n    instruction: do it\n    rules:\n      - condition: again\n        next: work\n`, 'mocked.yaml');

describe('job workflow with mocked activities', () => {
  let connection: Connection;
  let client: Client;
  let native: NativeConnection;
  const taskQueue = `mocked-${randomUUID()}`;
  let current: Mocks;
  let worker: Worker;
  let running: Promise<void>;

  before(async () => {
    installRuntime(loadConfig().logLevel);
    connection = await Connection.connect({ address: temporalAddress() });
    client = new Client({ connection });
    native = await NativeConnection.connect({ address: temporalAddress() });
    const bundle = process.env.MAESTRO_WORKFLOW_BUNDLE;
    worker = await Worker.create({
      connection: native,
      taskQueue,
      ...(bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: WORKFLOWS_PATH }),
      // One worker for the file; each test swaps in its own mocks through `current`.
      activities: mockActivities(() => current),
    });
    running = worker.run();
  });
  after(async () => {
    worker?.shutdown();
    await running;
    await native?.close();
    await connection?.close();
  });

  async function start(m: Mocks) {
    current = m;
    const jobId = randomUUID();
    return client.workflow.start('jobWorkflow', {
      taskQueue,
      workflowId: `job-${jobId}`,
      args: [{ jobId, pieceHash: 'hash', options: { heartbeatTimeoutSeconds: 30 } } satisfies JobWorkflowInput],
    });
  }
  const fresh = (piece: Piece, results: Mocks['results']): Mocks => ({ piece, results, movements: [], statuses: [], expired: [] });

  it('over the ask limit: no park, the movement runs again with a note, then aborts after the deflections', async () => {
    const m = fresh(pieceWith('max_asks: 1'), [{ next: 'ASK', summary: 'a question?' }]);
    const handle = await start(m);
    await waitFor(() => m.statuses.some((s) => s.waitReason === 'question'), { timeoutMs: 20_000 });
    await handle.signal(replySignal, { commentId: 1 });
    const result = (await handle.result()) as JobWorkflowResult;
    assert.deepEqual({ status: result.status, reason: result.reason }, { status: 'aborted', reason: 'ask_limit_reached' });
    // 1 asked and parked, 1 more over the limit, then the deflected re-runs.
    assert.equal(m.movements.length, 2 + MAX_ASK_LIMIT_DEFLECTIONS);
    assert.equal(m.statuses.filter((s) => s.waitReason === 'question').length, 1, 'parked once');
    assert.equal(m.movements[0].note, undefined);
    for (const deflected of m.movements.slice(2)) assert.ok(deflected.note && deflected.note.length > 0, 'the re-run carries the ask-limit note');
  });

  it('an approval nobody decides expires by its timer and the movement runs again', async () => {
    const m = fresh(pieceWith('approval_timeout: 1'), [
      { next: 'WAITING_HUMAN_TOOL_REQUEST', waitReason: 'tool_request', requestId: 'req-1', summary: 'asks for Bash' },
      { next: 'COMPLETE', summary: 'went on without it' },
    ]);
    const handle = await start(m);
    const result = (await handle.result()) as JobWorkflowResult;
    assert.equal(result.status, 'completed');
    assert.deepEqual(m.expired, ['req-1']);
    assert.equal(m.movements.length, 2);
    assert.deepEqual(m.statuses.map((s) => s.status), ['running', 'waiting_human', 'running', 'completed']);
  });

  it('max_movements bounds a movement that keeps transitioning to itself', async () => {
    const m = fresh(pieceWith('max_movements: 3'), [{ next: 'work', summary: 'again' }]);
    const result = (await (await start(m)).result()) as JobWorkflowResult;
    assert.deepEqual({ status: result.status, reason: result.reason }, { status: 'aborted', reason: 'max_movements' });
    assert.equal(m.movements.length, 3);
  });
});
