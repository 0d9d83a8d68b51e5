// The piece runner: one workflow per job. It loops over movements (one activity each), applies the
// pure decideStep to each result, and parks on signal waits (parks.ts), holding no worker slot.
// Deterministic code only: no Node modules, no clock, no DB (enforced by lint and a bundle test).
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { MaestroMovement, MaestroPiece, MaestroStatus, MaestroWaitReason } from '../core/search-attributes.js';
import { withPieceDefaults } from '../core/piece-defaults.js';
import type { JobStatus, MovementResult, Piece, WaitReason } from '../core/types.js';
import {
  jobStateQuery,
  type JobWorkflowInput,
  type JobWorkflowResult,
  type JobWorkflowState,
  type LegacyJobWorkflowInput,
} from '../core/job-workflow-contract.js';
import { decideStep } from './map-movement-result.js';
import { installParkHandlers } from './parks.js';

/** Workflow versioning (patched): histories recorded before this change replay the old way. */
const RESUME_STATUS_ALONGSIDE_MOVEMENT = 'resume-status-alongside-movement';
/** The piece is loaded from the job row by id (invariant: piece from the row); before it, it travelled in the input. */
export const PIECE_BY_ID = 'piece-by-id';

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

// A refusal is non-retryable and ends the run at once; anything else (the database away) is
// retried until it answers, since a run that gave up here would leave its job 'queued' for good.
const { loadJobPiece } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** How this run names its piece to runMovement: the verified hash, or (old histories) the recorded copy. */
type PieceClaim = { pieceHash: string; piece?: undefined } | { piece: Piece; pieceHash?: undefined };

/**
 * The piece this run follows. A new run always loads it from the job row (patched() is true
 * outside replay), so a piece in a forged input is never followed; the worker refuses the load
 * unless this workflow is the job's and the hash is the stored piece's. Only the replay of a
 * history recorded before this change takes the piece from its input, as that history did.
 */
async function loadPiece(input: JobWorkflowInput | LegacyJobWorkflowInput): Promise<{ piece: Piece; claim: PieceClaim }> {
  if (patched(PIECE_BY_ID)) {
    try {
      // A run continued from an old-shape run has no hash yet: its piece copy is the claim checked.
      const claim = input.pieceHash !== undefined ? { pieceHash: input.pieceHash } : { piece: input.piece };
      // The resume state is checked too: a restarted run must not reset the job's counters.
      const loaded = await loadJobPiece({ jobId: input.jobId, ...claim, resume: input.resume });
      return { piece: withPieceDefaults(loaded.piece), claim: { pieceHash: loaded.pieceHash } };
    } catch (err) {
      if (isCancellation(err)) throw err;
      // Not this workflow's job to touch: fail without writing the job row (no finish()).
      throw ApplicationFailure.nonRetryable(`job ${input.jobId} refused: ${describeFailure(err)}`, 'JobRefused');
    }
  }
  const legacy = input as LegacyJobWorkflowInput;
  // The claim is the recorded copy as it is (the worker hashes it); the run reads it with defaults.
  return { piece: withPieceDefaults(legacy.piece), claim: { piece: legacy.piece } };
}

export async function jobWorkflow(input: JobWorkflowInput | LegacyJobWorkflowInput): Promise<JobWorkflowResult> {
  const { jobId } = input;
  const runOptions = movementOptions(input.options?.heartbeatTimeoutSeconds);
  const { runMovement } = proxyActivities<Activities>(runOptions);
  const state: JobWorkflowState = {
    status: 'running',
    movement: input.resume?.movement ?? null,
    movementCount: input.resume?.movementCount ?? 0,
    waitReason: null,
    resumeMovement: null,
    requestId: null,
    asks: input.resume?.asks ?? 0,
    askDeflections: input.resume?.askDeflections ?? 0,
    children: {},
  };
  const parks = installParkHandlers(state, jobId, input.options);
  setHandler(jobStateQuery, () => state);
  const { piece, claim } = await loadPiece(input);
  state.movement ??= piece.initial_movement;

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

  // The 'running' projection after a resume runs alongside the resumed movement (see below).
  let pendingStatus: Promise<void> | undefined;
  const settleStatus = async () => {
    const pending = pendingStatus;
    pendingStatus = undefined;
    await pending;
  };

  const finish = async (status: JobWorkflowResult['status'], reason?: string, summary?: string) => {
    // Terminal bookkeeping must happen even when the workflow itself is being cancelled, and after
    // any earlier projection, so the row ends with the final status.
    await CancellationScope.nonCancellable(async () => {
      await settleStatus().catch(() => undefined);
      await setStatus(status, { reason, summary });
    });
    return { status, reason, movementCount: state.movementCount };
  };

  try {
    upsertSearchAttributes([{ key: MaestroPiece, value: piece.name }]);
    await setStatus('running');
    let note: string | undefined;
    for (;;) {
      const movement = state.movement as string;
      state.movementCount += 1;
      upsertSearchAttributes([{ key: MaestroMovement, value: movement }]);
      const result: MovementResult = await runMovement.executeWithOptions(
        { ...runOptions, summary: `${movement} (movement ${state.movementCount} of job)` },
        [{ jobId, ...claim, movement, sequence: state.movementCount, movementRunId: uuid4(), note }],
      );
      await settleStatus();
      note = undefined;
      const step = decideStep(result, piece, state);
      state.asks = step.counters.asks;
      state.askDeflections = step.counters.askDeflections;
      const { decision } = step;
      if (decision.kind === 'done') return await finish(decision.status, decision.reason, result.summary);
      if (decision.kind === 'again') {
        note = decision.note;
        continue;
      }
      if (decision.kind === 'park') {
        await parks.park(
          { waitReason: decision.waitReason, requestId: result.requestId ?? null, approvalTimeoutSeconds: piece.approval_timeout },
          () => setStatus(decision.status, { waitReason: decision.waitReason, resumeMovement: decision.resumeMovement }),
        );
        state.movement = decision.resumeMovement;
        if (patched(RESUME_STATUS_ALONGSIDE_MOVEMENT)) {
          // One activity hop less between a person's reply and the model working again: the
          // 'running' projection and the resumed movement are scheduled together. It carries the
          // count as it stands (not the movement's): a continue-as-new before that movement starts
          // resumes at this count, and loadJobPiece refuses a resume behind the row's count.
          pendingStatus = setStatus('running');
        } else {
          await setStatus('running');
        }
      } else {
        state.movement = decision.movement;
      }
      const childrenRunning = Object.values(state.children).some((c) => !c.ended);
      if (workflowInfo().continueAsNewSuggested && !childrenRunning) {
        await settleStatus();
        await continueAsNew<typeof jobWorkflow>({
          jobId,
          ...claim,
          options: input.options,
          resume: { movement: state.movement as string, movementCount: state.movementCount, asks: state.asks, askDeflections: state.askDeflections },
        });
      }
    }
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) return await finish('cancelled', 'cancelled');
    const reason = describeFailure(err);
    log.error('job failed', { jobId, reason });
    await finish('failed', reason);
    throw ApplicationFailure.nonRetryable(`job ${jobId} failed: ${reason}`, 'JobFailed');
  }
}

function describeFailure(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
