// Lessons passed between movements and verify feedback addressed to a movement. Both are keyed by the
// movement run that produced them, so a retried activity never stores them twice.
import type { Db } from '../database.js';

export interface LessonView {
  movement: string;
  text: string;
}

export async function addLessons(db: Db, l: { jobId: string; movementRunId: string; movement: string; texts: string[] }): Promise<void> {
  if (!l.texts.length) return;
  await db
    .insertInto('lessons')
    .values(l.texts.map((text, idx) => ({ job_id: l.jobId, movement_run_id: l.movementRunId, idx, movement: l.movement, text })))
    .onConflict((oc) => oc.columns(['movement_run_id', 'idx']).doNothing())
    .execute();
}

/** Every lesson of the job, oldest first. */
export async function listLessons(db: Db, jobId: string): Promise<LessonView[]> {
  return db.selectFrom('lessons').select(['movement', 'text']).where('job_id', '=', jobId).orderBy('id').execute();
}

export interface FeedbackView {
  fromMovement: string;
  text: string;
  createdAt: string;
}

export async function addFeedback(
  db: Db,
  f: { jobId: string; movementRunId: string; fromMovement: string; toMovement: string; text: string },
): Promise<void> {
  await db
    .insertInto('feedback')
    .values({ job_id: f.jobId, movement_run_id: f.movementRunId, from_movement: f.fromMovement, to_movement: f.toMovement, text: f.text })
    .onConflict((oc) => oc.column('movement_run_id').doNothing())
    .execute();
}

/** The latest feedback addressed to a movement, oldest first. */
export async function latestFeedbackFor(db: Db, jobId: string, movement: string, limit = 3): Promise<FeedbackView[]> {
  const rows = await db
    .selectFrom('feedback')
    .select(['from_movement', 'text', 'created_at'])
    .where('job_id', '=', jobId)
    .where('to_movement', '=', movement)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse().map((r) => ({ fromMovement: r.from_movement, text: r.text, createdAt: r.created_at.toISOString() }));
}
