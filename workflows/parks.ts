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

/** The spawnChild signal carries the child id only (issue 7); before, it carried the piece. */
export const SPAWN_CHILD_BY_ID = 'spawn-child-by-id';

const { expireRequest, describeChildJob } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export interface WakeCounts {
  replies: number;
  browser: number;
  decisions: number;
}

/** What the signal handlers recorded (per workflow run: no module-level state in workflow code). */
export interface ParkState {
  counts: WakeCounts;
  decided: Set<string>;
  snapshot(): WakeCounts;
}

export function installParkHandlers(state: JobWorkflowState, jobId: string, options: JobWorkflowOptions | undefined): ParkState {
  const park: ParkState = {
    counts: { replies: 0, browser: 0, decisions: 0 },
    decided: new Set(),
    snapshot: () => ({ ...park.counts }),
  };
  setHandler(replySignal, () => {
    // A reply to a running job is stored already and reaches the next movement's last 5 comments.
    park.counts.replies += 1;
  });
  setHandler(browserResolvedSignal, () => {
    park.counts.browser += 1;
  });
  setHandler(decisionSignal, ({ requestId }) => {
    park.counts.decisions += 1;
    park.decided.add(requestId);
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
  return park;
}

/** Waits until what the park waits for has happened (or an approval expired). */
export async function waitForWakeUp(
  park: ParkState,
  waitReason: WaitReason,
  before: WakeCounts,
  state: JobWorkflowState,
  approvalTimeoutSeconds: number | undefined,
  jobId: string,
): Promise<void> {
  switch (waitReason) {
    case 'question':
      await condition(() => park.counts.replies > before.replies);
      return;
    case 'browser_login':
    case 'captcha':
      await condition(() => park.counts.browser > before.browser);
      return;
    case 'subtasks':
      await condition(() => Object.values(state.children).every((c) => c.ended));
      return;
    case 'tool_request':
    case 'package_request':
    case 'spawn_request': {
      const requestId = state.requestId;
      if (!requestId) {
        await condition(() => park.counts.decisions > before.decisions);
        return;
      }
      const decided = () => park.decided.has(requestId);
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
