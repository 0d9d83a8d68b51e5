// The job's event log: what the engine did, for the API's timeline and for debugging.
// Every type and its data: core/job-events.ts.
import type { JobEvent } from '../../core/job-events.js';
import { redactDeep } from '../../core/redact.js';
import type { Db } from '../database.js';
import type { JobEventRow } from '../schema.js';
import { iso, parseJson } from './row-mapping.js';

/** A stored event as the API serves it; `type` and `data` are one of JobEvent's, unchecked (see StoredJobEvent). */
export interface JobEventView {
  id: number;
  jobId: string;
  movementRunId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: string;
}

function toJobEventView(r: JobEventRow): JobEventView {
  return {
    id: Number(r.id),
    jobId: r.job_id,
    movementRunId: r.movement_run_id,
    type: r.type,
    data: parseJson<Record<string, unknown>>(r.data),
    createdAt: iso(r.created_at),
  };
}

export async function addEvent(
  db: Db,
  e: { jobId: string; movementRunId?: string | null } & JobEvent,
): Promise<JobEventView> {
  const row = await db
    .insertInto('job_events')
    // Events are written by the engine and read by anyone with the API: no secret goes in. Data
    // left out (only an untyped caller can) is stored as {}.
    .values({ job_id: e.jobId, movement_run_id: e.movementRunId ?? null, type: e.type, data: JSON.stringify(redactDeep(e.data ?? {})) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toJobEventView(row);
}

/** Oldest first; afterId pages forward (events with id > afterId). No limit unless given. */
export async function listEvents(db: Db, jobId: string, opts: { afterId?: number; limit?: number } = {}): Promise<JobEventView[]> {
  let q = db.selectFrom('job_events').selectAll().where('job_id', '=', jobId);
  if (opts.afterId !== undefined) q = q.where('id', '>', opts.afterId);
  q = q.orderBy('id', 'asc');
  if (opts.limit !== undefined) q = q.limit(opts.limit);
  return (await q.execute()).map(toJobEventView);
}
