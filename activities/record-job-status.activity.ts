// Projects the workflow's status into Postgres (the API's read model) and the job's event stream.
// This module is the one writer of a job row's status, current movement and movement count: every
// value it writes was decided by the job's workflow, so no two writers can disagree (see
// projectMovementStart for the one write that happens inside a movement).
import type { JobStatus } from '../core/types.js';
import type { Db } from '../db/database.js';
import { addEvent, updateJobState, type JobStatePatch } from '../db/repositories/index.js';
import { assertCallerOwnsJob } from './job-piece.activity.js';

export interface RecordJobStatusInput {
  jobId: string;
  status: JobStatus;
  currentMovement: string | null;
  waitReason: string | null;
  resumeMovement: string | null;
  reason: string | null;
  summary?: string;
  movementCount: number;
}

/** The one write of the workflow's projection into the job row. */
async function projectJobState(db: Db, jobId: string, projection: JobStatePatch): Promise<void> {
  await updateJobState(db, jobId, projection);
}

/**
 * A movement's start, visible in the row while it runs (the API and `maestro show` read it). A
 * transition schedules no status activity (invariant: small history), so runMovement writes it,
 * but only the movement and sequence the workflow put in its input: the same values the
 * workflow's own projection carries, never a count of the activity's making.
 */
export async function projectMovementStart(db: Db, input: { jobId: string; movement: string; sequence: number }): Promise<void> {
  await projectJobState(db, input.jobId, { currentMovement: input.movement, movementCount: input.sequence });
}

export function createRecordJobStatus(db: Db) {
  return async function recordJobStatus(input: RecordJobStatusInput): Promise<void> {
    // A workflow that is not this job's (started directly on Temporal) cannot rewrite its row.
    await assertCallerOwnsJob(db, input.jobId);
    await projectJobState(db, input.jobId, {
      status: input.status,
      currentMovement: input.currentMovement,
      waitReason: input.waitReason,
      resumeMovement: input.resumeMovement,
      reason: input.reason,
      movementCount: input.movementCount,
      ...(input.summary !== undefined ? { summary: input.summary } : {}),
    });
    await addEvent(db, {
      jobId: input.jobId,
      type: 'job.status',
      data: {
        status: input.status,
        movement: input.currentMovement,
        waitReason: input.waitReason,
        reason: input.reason,
      },
    });
  };
}
