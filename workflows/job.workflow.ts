// The piece runner: one workflow per job. It loops over movements (one activity each), maps each
// result with the pure mapMovementResult, and parks on signal waits, holding no worker slot.
// Deterministic code only: no Node modules, no clock, no DB (enforced by lint and a bundle test).
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { MaestroMovement, MaestroStatus, MaestroWaitReason } from '../core/search-attributes.js';
import type { JobStatus, MovementResult, WaitReason } from '../core/types.js';
import {
  jobStateQuery,
  replySignal,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type JobWorkflowState,
} from './definitions.js';
import { mapMovementResult } from './map-movement-result.js';

function movementOptions(heartbeatTimeoutSeconds = 120): ActivityOptions {
  return {
    // A movement may run for a long time, but it heartbeats every LLM chunk and tool step: a dead
    // worker or a hung stream is noticed by the heartbeat timeout, and the retried attempt resumes
    // from the movement's last checkpoint.
    startToCloseTimeout: '4 hours',
    heartbeatTimeout: heartbeatTimeoutSeconds * 1000,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
  };
}
const { recordJobStatus } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

export async function jobWorkflow(input: JobWorkflowInput): Promise<JobWorkflowResult> {
  const { jobId, piece } = input;
  const runOptions = movementOptions(input.options?.heartbeatTimeoutSeconds);
  const { runMovement } = proxyActivities<Activities>(runOptions);
  const state: JobWorkflowState = {
    status: 'running',
    movement: input.resume?.movement ?? piece.initial_movement,
    movementCount: input.resume?.movementCount ?? 0,
    waitReason: null,
    resumeMovement: null,
  };
  let repliesReceived = 0;
  setHandler(replySignal, () => {
    repliesReceived += 1;
  });
  setHandler(jobStateQuery, () => state);

  const setStatus = async (
    status: JobStatus,
    extra: { waitReason?: WaitReason | null; resumeMovement?: string | null; reason?: string; summary?: string } = {},
  ) => {
    state.status = status;
    state.waitReason = extra.waitReason ?? null;
    state.resumeMovement = extra.resumeMovement ?? null;
    upsertSearchAttributes([
      { key: MaestroStatus, value: status },
      { key: MaestroWaitReason, value: state.waitReason ?? null },
    ]);
    await recordJobStatus({
      jobId,
      status,
      currentMovement: state.movement,
      waitReason: state.waitReason,
      resumeMovement: state.resumeMovement,
      reason: extra.reason ?? null,
      summary: extra.summary,
      movementCount: state.movementCount,
    });
  };

  const finish = async (status: JobWorkflowResult['status'], reason?: string, summary?: string) => {
    // Terminal bookkeeping must happen even when the workflow itself is being cancelled.
    await CancellationScope.nonCancellable(() => setStatus(status, { reason, summary }));
    return { status, reason, movementCount: state.movementCount };
  };

  try {
    await setStatus('running');
    for (;;) {
      const movement = state.movement as string;
      state.movementCount += 1;
      upsertSearchAttributes([{ key: MaestroMovement, value: movement }]);
      const result: MovementResult = await runMovement.executeWithOptions(
        { ...runOptions, summary: `${movement} (movement ${state.movementCount} of job)` },
        [{ jobId, piece, movement, sequence: state.movementCount, movementRunId: uuid4() }],
      );
      const decision = mapMovementResult(result, piece, { movementCount: state.movementCount });
      if (decision.kind === 'done') return await finish(decision.status, decision.reason, result.summary);
      if (decision.kind === 'park') {
        const repliesBefore = repliesReceived;
        await setStatus(decision.status, { waitReason: decision.waitReason, resumeMovement: decision.resumeMovement });
        // Only ASK-style parks are woken by replies so far; other wake-ups arrive with their own signals.
        await condition(() => repliesReceived > repliesBefore);
        state.movement = decision.resumeMovement;
        await setStatus('running');
      } else {
        state.movement = decision.movement;
      }
      if (workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof jobWorkflow>({
          jobId,
          piece,
          options: input.options,
          resume: { movement: state.movement as string, movementCount: state.movementCount },
        });
      }
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) return await finish('cancelled', 'cancelled');
    const reason = describeFailure(err);
    await finish('failed', reason);
    throw ApplicationFailure.nonRetryable(`job ${jobId} failed: ${reason}`, 'JobFailed');
  }
}

function describeFailure(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
