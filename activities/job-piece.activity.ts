// The worker runs only what was submitted (invariant: piece from the row): the piece of a job is the one frozen in its row,
// and a workflow gets it only when it is that job's workflow and names the stored piece's hash.
// Anyone who can reach Temporal can start a jobWorkflow with input of their choosing; these checks
// are what makes such a workflow run nothing (no LLM request, no tool, no write to the job's row).
import { type ApplicationFailure, Context } from '@temporalio/activity';
import { NonRetryableError } from '../core/errors.js';
import { TERMINAL_STATUSES, type Piece } from '../core/types.js';
import type { Db } from '../db/database.js';
import { getJob, getJobPieceRecord, type JobPieceRecord } from '../db/repositories/index.js';
import { hashPiece } from '../engine/piece/piece-hash.js';
import { nonRetryableFailure } from './errors.js';

/** A refusal is final: retrying the same forged input cannot succeed. */
export class JobPieceRefusedError extends NonRetryableError {
  override name = 'JobPieceRefusedError';
}

export function refusal(message: string): ApplicationFailure {
  return nonRetryableFailure(new JobPieceRefusedError(message));
}

/** What a caller claims: the hash (new inputs), or the piece of a history recorded before piece-by-id. */
export interface PieceClaim {
  jobId: string;
  pieceHash?: string;
  /** Only from histories recorded before this change: hashed and compared, never run. */
  piece?: Piece;
  /** Where a continued run picks up: checked against the row (counters never go back). */
  resume?: { movement: string; movementCount: number; asks: number; askDeflections: number };
}

const count = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0;

/**
 * A run without resume state is a job's first: its row is still queued. A continued run's state
 * must name a movement of the piece and may not count fewer movements than the row has seen, so a
 * workflow restarted by hand with a forged resume can neither reset max_movements nor max_asks'
 * bound on spend, nor start outside the piece.
 */
function checkResume(claim: PieceClaim, record: JobPieceRecord): void {
  const r = claim.resume;
  if (r === undefined) {
    if (record.status !== 'queued' || record.movementCount !== 0) {
      throw refusal(`job ${claim.jobId} has started already (${record.status}, ${record.movementCount} movements); a new run must continue it`);
    }
    return;
  }
  if (!count(r.movementCount) || !count(r.asks) || !count(r.askDeflections)) throw refusal(`the resume state given for job ${claim.jobId} is not valid`);
  if (!record.piece.movements.some((m) => m.name === r.movement)) throw refusal(`job ${claim.jobId}'s piece has no movement "${r.movement}"`);
  if (r.movementCount < record.movementCount) {
    throw refusal(`job ${claim.jobId} has run ${record.movementCount} movements; a run may not resume it at ${r.movementCount}`);
  }
}

function callerWorkflowId(): string {
  // Set by the server from the workflow that scheduled the activity; no input can change it.
  const caller = Context.current().info.workflowExecution?.workflowId;
  if (!caller) throw refusal('this activity runs only for a job workflow');
  return caller;
}

/**
 * The job's stored piece, once the calling workflow is the job's own, the job has not ended, and the
 * claimed hash is the stored piece's. Throws a non-retryable ApplicationFailure otherwise.
 */
export async function loadVerifiedPiece(db: Db, claim: PieceClaim): Promise<JobPieceRecord> {
  const caller = callerWorkflowId();
  const record = await getJobPieceRecord(db, claim.jobId);
  if (!record) throw refusal(`job ${claim.jobId} does not exist; workflow ${caller} runs nothing`);
  if (record.workflowId !== caller) {
    throw refusal(`job ${claim.jobId} belongs to workflow ${record.workflowId}, not to ${caller}`);
  }
  if (TERMINAL_STATUSES.includes(record.status)) {
    throw refusal(`job ${claim.jobId} has ended (${record.status}); it does not run again`);
  }
  const claimed = claim.pieceHash ?? (claim.piece !== undefined ? hashPiece(claim.piece) : undefined);
  if (!claimed) throw refusal(`workflow ${caller} names no piece hash for job ${claim.jobId}`);
  if (claimed !== record.pieceHash) {
    throw refusal(`the piece hash given for job ${claim.jobId} is not the hash of the piece stored with it`);
  }
  // The row's own integrity: a piece edited in place without its hash is not run either.
  if (hashPiece(record.piece) !== record.pieceHash) {
    throw refusal(`the piece stored with job ${claim.jobId} does not match its recorded hash`);
  }
  return record;
}

/** loadVerifiedPiece for the start of a workflow run, whose resume state is checked as well. */
async function loadForRun(db: Db, claim: PieceClaim): Promise<JobPieceRecord> {
  const record = await loadVerifiedPiece(db, claim);
  checkResume(claim, record);
  return record;
}

/** Activities that write a job's rows check that the calling workflow is that job's workflow. */
export async function assertCallerOwnsJob(db: Db, jobId: string): Promise<void> {
  const caller = callerWorkflowId();
  const job = await getJob(db, jobId);
  if (!job) throw refusal(`job ${jobId} does not exist`);
  if (job.workflowId !== caller) throw refusal(`job ${jobId} belongs to workflow ${job.workflowId}, not to ${caller}`);
}

export function createLoadJobPiece(db: Db) {
  /** Called once at the start of each workflow run (and after continue-as-new). */
  return async function loadJobPiece(claim: PieceClaim): Promise<{ piece: Piece; pieceHash: string }> {
    const record = await loadForRun(db, claim);
    return { piece: record.piece, pieceHash: record.pieceHash };
  };
}

export function createDescribeChildJob(db: Db) {
  /**
   * For the spawnChild signal, which carries a child job id only: the child must be a job of the
   * calling workflow's job that has not ended. Returns what the child workflow is started with.
   */
  return async function describeChildJob(input: { parentJobId: string; childJobId: string }): Promise<{ pieceHash: string; pieceName: string }> {
    await assertCallerOwnsJob(db, input.parentJobId);
    const child = await getJobPieceRecord(db, input.childJobId);
    if (!child || child.parentId !== input.parentJobId) {
      throw refusal(`job ${input.childJobId} is not a subtask of job ${input.parentJobId}`);
    }
    if (TERMINAL_STATUSES.includes(child.status)) throw refusal(`subtask ${input.childJobId} has ended (${child.status})`);
    return { pieceHash: child.pieceHash, pieceName: child.pieceName };
  };
}
