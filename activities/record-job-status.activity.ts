// Projects the workflow's status into Postgres (the API's read model) and the job's event stream.
import type { JobStatus } from '../core/types.js';
import type { Db } from '../db/database.js';
import { addEvent, updateJobState } from '../db/repositories/index.js';
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

export function createRecordJobStatus(db: Db) {
  return async function recordJobStatus(input: RecordJobStatusInput): Promise<void> {
    // A workflow that is not this job's (started directly on Temporal) cannot rewrite its row.
    await assertCallerOwnsJob(db, input.jobId);
    await updateJobState(db, input.jobId, {
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
