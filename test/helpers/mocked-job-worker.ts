// One worker running the real job-workflow bundle with mocked activities (as Temporal's samples test
// workflows), on the run's shared dev server: no database, no model. Each test swaps in its own
// mocks; child jobs run on the same task queue, so the same mocks answer for them too.
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';
import { refusal } from '../../activities/job-piece.activity.js';
import type { MovementResult, Piece } from '../../core/types.js';
import { parsePiece } from '../../engine/piece/piece-loader.js';
import { installRuntime } from '../../infra/stack.js';
import { loadConfig } from '../../config/config.js';
import { WORKFLOWS_PATH } from '../../worker/workflows-path.js';
import type { JobWorkflowInput } from '../../core/job-workflow-contract.js';
import { temporalAddress } from './test-stack.js';

export type MovementInput = Parameters<Activities['runMovement']>[0];
export type LoadPieceInput = Parameters<Activities['loadJobPiece']>[0];

export interface Mocks {
  piece: Piece;
  /** What each runMovement call returns, in order (the last one repeats); unused when `script` is set. */
  results: Array<Partial<MovementResult>>;
  /** Answers runMovement instead of `results` (it sees the call already recorded in `movements`). */
  script?: (input: MovementInput) => Partial<MovementResult> | Promise<Partial<MovementResult>>;
  /** childJobId -> parentJobId: the subtasks describeChildJob vouches for. */
  subtasks: Record<string, string>;
  movements: MovementInput[];
  loads: LoadPieceInput[];
  statuses: Array<{ jobId: string; status: string; waitReason: string | null; movementCount: number }>;
  expired: string[];
}

/** A one-movement piece whose movement may transition to itself; `extra` adds top-level keys. */
export const mockedPiece = (extra = ''): Piece =>
  parsePiece(`name: mocked\ninitial_movement: work\nsystem_prompt: s\n${extra}\nmovements:\n  - name: work\n    instruction: do it\n    rules:\n      - condition: again\n        next: work\n`, 'mocked.yaml');

export const freshMocks = (piece: Piece, results: Mocks['results'] = []): Mocks => ({
  piece,
  results,
  subtasks: {},
  movements: [],
  loads: [],
  statuses: [],
  expired: [],
});

/** Activities that act on whichever test's mocks are current (one worker serves the whole file). */
function mockActivities(mocks: () => Mocks): Activities {
  return {
    loadJobPiece: async (input: LoadPieceInput) => {
      mocks().loads.push(input);
      return { piece: mocks().piece, pieceHash: 'hash' };
    },
    recordJobStatus: async (s: { jobId: string; status: string; waitReason: string | null; movementCount: number }) => {
      mocks().statuses.push({ jobId: s.jobId, status: s.status, waitReason: s.waitReason, movementCount: s.movementCount });
    },
    runMovement: async (input: MovementInput) => {
      const m = mocks();
      m.movements.push(input);
      const scripted = m.script ? await m.script(input) : m.results[Math.min(m.movements.length - 1, m.results.length - 1)];
      return { movementRunId: input.movementRunId, movement: input.movement, next: null, summary: '', iterations: 1, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, ...scripted };
    },
    expireRequest: async (input: { requestId: string }) => {
      mocks().expired.push(input.requestId);
    },
    describeChildJob: async (input: { parentJobId: string; childJobId: string }) => {
      const m = mocks();
      // Refused as the real activity refuses: non-retryable, so the signal handler gives up at once.
      if (m.subtasks[input.childJobId] !== input.parentJobId) throw refusal(`job ${input.childJobId} is not a subtask of job ${input.parentJobId}`);
      return { pieceHash: 'hash', pieceName: m.piece.name };
    },
  } as unknown as Activities;
}

export interface MockedJobWorker {
  client: Client;
  /** Makes `mocks` current and starts a job workflow for a new (or the given) job id. */
  start(mocks: Mocks, jobId?: string): Promise<WorkflowHandle>;
  stop(): Promise<void>;
}

export async function startMockedJobWorker(): Promise<MockedJobWorker> {
  installRuntime(loadConfig().logLevel);
  const connection = await Connection.connect({ address: temporalAddress() });
  const client = new Client({ connection });
  const native = await NativeConnection.connect({ address: temporalAddress() });
  const taskQueue = `mocked-${randomUUID()}`;
  let current: Mocks | undefined;
  const bundle = process.env.MAESTRO_WORKFLOW_BUNDLE;
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    ...(bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: WORKFLOWS_PATH }),
    activities: mockActivities(() => {
      if (!current) throw new Error('no mocks: start a job first');
      return current;
    }),
  });
  const running = worker.run();
  return {
    client,
    start: async (mocks, jobId = randomUUID()) => {
      current = mocks;
      return client.workflow.start('jobWorkflow', {
        taskQueue,
        workflowId: `job-${jobId}`,
        args: [{ jobId, pieceHash: 'hash', options: { heartbeatTimeoutSeconds: 30 } } satisfies JobWorkflowInput],
      });
    },
    stop: async () => {
      worker.shutdown();
      await running;
      await native.close();
      await connection.close();
    },
  };
}
