// Park mechanics of the job workflow: the signal handlers that record wake-ups, the children the
// job started, and the wait that ends a park. Signals carry ids only (what a person said is in
// Postgres already); a stray or late signal is recorded or logged, never fails the workflow task.
import {
  ActivityFailure,
  condition,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { MaestroPiece, MaestroStatus } from '../core/search-attributes.js';
import { workflowIdForJob, type WaitReason } from '../core/types.js';
import {
  browserResolvedSignal,
  decisionSignal,
  replySignal,
  spawnChildSignal,
  type JobWorkflowInput,
  type JobWorkflowOptions,
  type JobWorkflowResult,
  type JobWorkflowState,
  type LegacyJobWorkflowInput,
  type LegacySpawnChildPayload,
} from '../core/job-workflow-contract.js';

/** The spawnChild signal carries the child id only (invariant: piece from the row); before, it carried the piece. */
export const SPAWN_CHILD_BY_ID = 'spawn-child-by-id';

const { expireRequest, describeChildJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

interface WakeCounts {
  replies: number;
  browser: number;
  decisions: number;
}

/** What the signal handlers recorded (per workflow run: no module-level state in workflow code). */
interface WakeLog {
  counts: WakeCounts;
  decided: Set<string>;
}

export interface ParkRequest {
  waitReason: WaitReason;
  /** The pending request a tool/package/spawn park waits on. */
  requestId: string | null;
  /** Seconds an approval may stay pending (the piece's approval_timeout; none: no expiry). */
  approvalTimeoutSeconds: number | undefined;
}

/** The job's parks: the signal handlers' record and the one way to wait on it. */
export interface Parks {
  /**
   * Parks the job: wake-ups count from before `record` (the status projection), so a reply that
   * arrives while it is written is not missed; then waits until what the park waits for happened.
   */
  park(request: ParkRequest, record: () => Promise<void>): Promise<void>;
}

/** Installs the signal handlers (before anything can await, so no signal is lost) and returns the job's parks. */
export function installParkHandlers(state: JobWorkflowState, jobId: string, options: JobWorkflowOptions | undefined): Parks {
  const wakes: WakeLog = { counts: { replies: 0, browser: 0, decisions: 0 }, decided: new Set() };
  setHandler(replySignal, () => {
    // A reply to a running job is stored already and reaches the next movement's last 5 comments.
    wakes.counts.replies += 1;
  });
  setHandler(browserResolvedSignal, () => {
    wakes.counts.browser += 1;
  });
  setHandler(decisionSignal, ({ requestId }) => {
    wakes.counts.decisions += 1;
    wakes.decided.add(requestId);
    if (requestId !== state.requestId) {
      log.warn('decision for a request this job is not waiting on (recorded, no effect now)', { requestId, waitingOn: state.requestId });
    }
  });
  setHandler(spawnChildSignal, async (payload) => {
    const { childJobId } = payload;
    if (state.children[childJobId]) return; // the same spawn signalled twice: one child
    state.children[childJobId] = { ended: false };
    let args: JobWorkflowInput | LegacyJobWorkflowInput;
    let pieceName: string;
    if (patched(SPAWN_CHILD_BY_ID)) {
      try {
        // Anyone who can reach Temporal can send this signal: the worker checks that the child is a
        // subtask of this job, and names its piece hash; the child then loads and checks its piece.
        const child = await describeChildJob({ parentJobId: jobId, childJobId });
        args = { jobId: childJobId, pieceHash: child.pieceHash, options };
        pieceName = child.pieceName;
      } catch (err) {
        const why = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
        log.warn('spawnChild refused', { childJobId, reason: why });
        delete state.children[childJobId];
        return;
      }
    } else {
      // Replay of a history recorded before this change, whose signal carried the piece.
      const legacy = payload as LegacySpawnChildPayload;
      args = { jobId: childJobId, piece: legacy.piece, options: legacy.options ?? options };
      pieceName = legacy.piece.name;
    }
    try {
      const handle = await startChild('jobWorkflow', {
        workflowId: workflowIdForJob(childJobId),
        args: [args],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        typedSearchAttributes: [
          { key: MaestroStatus, value: 'queued' },
          { key: MaestroPiece, value: pieceName },
        ],
      });
      handle.result().then(
        (r) => (state.children[childJobId] = { ended: true, status: (r as JobWorkflowResult).status }),
        () => (state.children[childJobId] = { ended: true, status: 'failed' }),
      );
    } catch (err) {
      log.error('could not start child job', { childJobId, error: String(err) });
      state.children[childJobId] = { ended: true, status: 'failed' };
    }
  });
  return {
    park: async (request, record) => {
      const before = { ...wakes.counts };
      state.requestId = request.requestId;
      await record();
      await waitForWakeUp(wakes, request.waitReason, before, state, request.approvalTimeoutSeconds, jobId);
      state.requestId = null;
    },
  };
}

/** Waits until what the park waits for has happened (or an approval expired). */
async function waitForWakeUp(
  wakes: WakeLog,
  waitReason: WaitReason,
  before: WakeCounts,
  state: JobWorkflowState,
  approvalTimeoutSeconds: number | undefined,
  jobId: string,
): Promise<void> {
  switch (waitReason) {
    case 'question':
      await condition(() => wakes.counts.replies > before.replies);
      return;
    case 'browser_login':
    case 'captcha':
      await condition(() => wakes.counts.browser > before.browser);
      return;
    case 'subtasks':
      await condition(() => Object.values(state.children).every((c) => c.ended));
      return;
    case 'tool_request':
    case 'package_request':
    case 'spawn_request': {
      const requestId = state.requestId;
      if (!requestId) {
        await condition(() => wakes.counts.decisions > before.decisions);
        return;
      }
      const decided = () => wakes.decided.has(requestId);
      if (approvalTimeoutSeconds) {
        const inTime = await condition(decided, approvalTimeoutSeconds * 1000);
        // The model learns of the expiry when the movement runs again (it finds the request expired).
        if (!inTime) await expireRequest({ jobId, requestId });
      } else {
        await condition(decided);
      }
    }
  }
}
