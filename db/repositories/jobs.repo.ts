// The jobs table: the read model of each job's workflow (status, movement, wait reason...).
import { NonRetryableError } from '../../core/errors.js';
import { redactSecrets } from '../../core/redact.js';
import { TERMINAL_STATUSES, type JobStatus, type JobView, type Piece } from '../../core/types.js';
import { hashPiece } from '../../engine/piece/piece-hash.js';
import type { Db } from '../database.js';
import type { JobRow } from '../schema.js';
import { dbNow, dbNowIfNull, iso, isoOrNull, parseJson } from './row-mapping.js';

/** The one JobNotFoundError: from the repository, the activities and (by name) the API's 404. */
export class JobNotFoundError extends NonRetryableError {
  override name = 'JobNotFoundError';
  constructor(readonly jobId: string) {
    super(`job ${jobId} not found`);
  }
}

export interface NewJob {
  id: string;
  parentId?: string | null;
  pieceName: string;
  piece: Piece;
  instruction: string;
  workspace: string;
  workflowId: string;
  /** Children only: what was spawned, so the same spawn is never made twice. */
  spawnKey?: string | null;
}

export interface JobStatePatch {
  status?: JobStatus;
  currentMovement?: string | null;
  waitReason?: string | null;
  resumeMovement?: string | null;
  reason?: string | null;
  summary?: string | null;
  movementCount?: number;
}

export function toJobView(r: JobRow): JobView {
  return {
    id: r.id,
    parentId: r.parent_id,
    piece: r.piece_name,
    instruction: r.instruction,
    workspace: r.workspace,
    status: r.status as JobStatus,
    currentMovement: r.current_movement,
    waitReason: r.wait_reason,
    resumeMovement: r.resume_movement,
    reason: r.reason,
    summary: r.summary,
    workflowId: r.workflow_id,
    movementCount: r.movement_count,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    finishedAt: isoOrNull(r.finished_at),
  };
}

export async function insertJob(db: Db, job: NewJob): Promise<JobView> {
  const row = await db
    .insertInto('jobs')
    .values({
      id: job.id,
      parent_id: job.parentId ?? null,
      piece_name: job.pieceName,
      piece: JSON.stringify(job.piece),
      // Computed here so that every way of creating a job stores it (the API, a subtask spawn).
      piece_hash: hashPiece(job.piece),
      instruction: job.instruction,
      workspace: job.workspace,
      status: 'queued',
      current_movement: null,
      wait_reason: null,
      resume_movement: null,
      reason: null,
      summary: null,
      workflow_id: job.workflowId,
      spawn_key: job.spawnKey ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toJobView(row);
}

export async function getJob(db: Db, id: string): Promise<JobView | undefined> {
  const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toJobView(row);
}

export async function getJobPiece(db: Db, id: string): Promise<Piece | undefined> {
  const row = await db.selectFrom('jobs').select('piece').where('id', '=', id).executeTakeFirst();
  return row && parseJson<Piece>(row.piece);
}

/** What the worker needs to decide whether a workflow may run this job's piece, and the piece. */
export interface JobPieceRecord {
  piece: Piece;
  pieceHash: string;
  pieceName: string;
  workflowId: string;
  parentId: string | null;
  status: JobStatus;
  movementCount: number;
}

export async function getJobPieceRecord(db: Db, id: string): Promise<JobPieceRecord | undefined> {
  const row = await db
    .selectFrom('jobs')
    .select(['piece', 'piece_hash', 'piece_name', 'workflow_id', 'parent_id', 'status', 'movement_count'])
    .where('id', '=', id)
    .executeTakeFirst();
  return (
    row && {
      piece: parseJson<Piece>(row.piece),
      pieceHash: row.piece_hash,
      pieceName: row.piece_name,
      workflowId: row.workflow_id,
      parentId: row.parent_id,
      status: row.status as JobStatus,
      movementCount: row.movement_count,
    }
  );
}

/** Newest first. */
export async function listJobs(
  db: Db,
  opts: { status?: JobStatus[]; limit?: number; parentId?: string } = {},
): Promise<JobView[]> {
  let q = db.selectFrom('jobs').selectAll();
  if (opts.status !== undefined) {
    if (opts.status.length === 0) return [];
    q = q.where('status', 'in', opts.status);
  }
  if (opts.parentId !== undefined) q = q.where('parent_id', '=', opts.parentId);
  q = q.orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (opts.limit !== undefined) q = q.limit(opts.limit);
  return (await q.execute()).map(toJobView);
}

/**
 * Always sets updated_at; the first move to a terminal status sets finished_at (later repeats of
 * a terminal update, e.g. a retried activity, keep the original time). Throws JobNotFoundError.
 * A running job's status, current movement and movement count are its workflow's projection:
 * the worker writes them only through activities/record-job-status.activity.ts.
 */
export async function updateJobState(db: Db, id: string, patch: JobStatePatch): Promise<void> {
  const terminal = patch.status !== undefined && TERMINAL_STATUSES.includes(patch.status);
  const result = await db
    .updateTable('jobs')
    .set({
      ...(patch.status !== undefined && { status: patch.status }),
      ...(patch.currentMovement !== undefined && { current_movement: patch.currentMovement }),
      ...(patch.waitReason !== undefined && { wait_reason: patch.waitReason }),
      ...(patch.resumeMovement !== undefined && { resume_movement: patch.resumeMovement }),
      ...(patch.reason !== undefined && { reason: patch.reason === null ? null : redactSecrets(patch.reason) }),
      ...(patch.summary !== undefined && { summary: patch.summary === null ? null : redactSecrets(patch.summary) }),
      ...(patch.movementCount !== undefined && { movement_count: patch.movementCount }),
      ...(terminal && { finished_at: dbNowIfNull('finished_at') }),
      updated_at: dbNow(),
    })
    .where('id', '=', id)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new JobNotFoundError(id);
}

/** How many child jobs parentId has (any status). */
export async function countChildren(db: Db, parentId: string): Promise<number> {
  const row = await db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('parent_id', '=', parentId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A child of parentId spawned with this key, if any. */
export async function findChildBySpawnKey(db: Db, parentId: string, spawnKey: string): Promise<JobView | undefined> {
  const row = await db.selectFrom('jobs').selectAll().where('parent_id', '=', parentId).where('spawn_key', '=', spawnKey).executeTakeFirst();
  return row && toJobView(row);
}

export async function setCaptchaSpace(db: Db, id: string, spaceId: string | null): Promise<void> {
  await db.updateTable('jobs').set({ captcha_space_id: spaceId }).where('id', '=', id).execute();
}

/** Jobs parked on a captcha of this space (one resolve wakes them all). */
export async function listCaptchaWaiters(db: Db, spaceId: string): Promise<JobView[]> {
  const rows = await db
    .selectFrom('jobs')
    .selectAll()
    .where('captcha_space_id', '=', spaceId)
    .where('status', '=', 'waiting_human')
    .where('wait_reason', '=', 'captcha')
    .execute();
  return rows.map(toJobView);
}
