// An approval that waited longer than the piece's approval_timeout becomes `expired` (unless a
// decision got there first); the model finds it expired when the movement runs again.
import type { Db } from '../db/database.js';
import { addEvent, decideRequest, getRequest, RequestNotPendingError } from '../db/repositories/index.js';
import { assertCallerOwnsJob, refusal } from './job-piece.activity.js';

export function createExpireRequest(db: Db) {
  return async function expireRequest(input: { jobId: string; requestId: string }): Promise<string> {
    await assertCallerOwnsJob(db, input.jobId);
    const request = await getRequest(db, input.requestId);
    if (request?.jobId !== input.jobId) throw refusal(`request ${input.requestId} is not a request of job ${input.jobId}`);
    try {
      const expired = await decideRequest(db, input.requestId, { status: 'expired', note: 'no decision before approval_timeout' });
      await addEvent(db, { jobId: input.jobId, type: 'request.expired', data: { requestId: input.requestId } });
      return expired.status;
    } catch (err) {
      if (err instanceof RequestNotPendingError) return err.request.status;
      throw err;
    }
  };
}
