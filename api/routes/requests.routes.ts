// Approval requests: read one, decide one. The decision is stored in Postgres first, then the job's
// workflow is signalled with the request id only; a workflow that is gone or busy loses nothing.
import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { TERMINAL_STATUSES, type RequestView } from '../../core/types.js';
import {
  addEvent,
  decideRequest,
  getJob,
  getRequest,
  RequestNotFoundError,
  RequestNotPendingError,
} from '../../db/repositories/index.js';
import { decisionSignal } from '../../core/job-workflow-contract.js';
import { ApiError, NotFoundError } from '../errors.js';
import { signalJob, type JobServiceDeps } from '../job-actions.js';
import { DecisionBody, RequestIdParams, RequestSchema } from '../approval-schemas.js';
import { ERROR_RESPONSES, ErrorSchema, jsonContent } from '../schemas.js';

const notFound = { 404: jsonContent(ErrorSchema, 'no such request') };

const showRoute = createRoute({
  method: 'get',
  path: '/api/requests/{id}',
  tags: ['requests'],
  summary: 'An approval request',
  request: { params: RequestIdParams },
  responses: { 200: jsonContent(RequestSchema, 'the request'), ...ERROR_RESPONSES, ...notFound },
});

const decideRoute = createRoute({
  method: 'post',
  path: '/api/requests/{id}/decision',
  tags: ['requests'],
  summary: 'Approve or decline a pending request (wakes the job waiting on it)',
  request: {
    params: RequestIdParams,
    body: { content: { 'application/json': { schema: DecisionBody } }, required: true },
  },
  responses: {
    200: jsonContent(RequestSchema, 'the decided request'),
    ...ERROR_RESPONSES,
    ...notFound,
    409: jsonContent(ErrorSchema, 'the request is not pending (decided or expired already); error.code request_not_pending'),
  },
});

export function registerRequestRoutes(app: OpenAPIHono, deps: JobServiceDeps): void {
  app.openapi(showRoute, async (c) => {
    const { id } = c.req.valid('param');
    const request = await getRequest(deps.db, id);
    if (!request) throw new NotFoundError(`no request ${id}`);
    return c.json(request, 200);
  });

  app.openapi(decideRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { decision, note } = c.req.valid('json');
    const request = await decide(deps, id, decision, note?.trim() || null);
    return c.json(request, 200);
  });
}

/**
 * Stores the decision, records it in the job's events, then wakes the job's workflow. A second
 * decision is refused (409), but the job is signalled again first: if the first signal was lost
 * (Temporal down), repeating the call is how a person wakes the job.
 */
export async function decide(
  deps: JobServiceDeps,
  id: string,
  decision: 'approved' | 'declined',
  note: string | null,
): Promise<RequestView> {
  let request: RequestView;
  try {
    request = await decideRequest(deps.db, id, { status: decision, note });
  } catch (err) {
    if (err instanceof RequestNotFoundError) throw new NotFoundError(`no request ${id}`);
    if (err instanceof RequestNotPendingError) {
      if (err.request.status !== 'expired') await signalDecision(deps, err.request);
      throw new ApiError(409, 'request_not_pending', `request ${id} is ${err.request.status} already; only a pending request can be decided`);
    }
    throw err;
  }
  await addEvent(deps.db, { jobId: request.jobId, type: 'request.decided', data: { requestId: id, status: decision, note } });
  await signalDecision(deps, request);
  return request;
}

async function signalDecision(deps: JobServiceDeps, request: RequestView): Promise<void> {
  const job = await getJob(deps.db, request.jobId);
  if (!job || TERMINAL_STATUSES.includes(job.status)) return;
  try {
    await signalJob(deps, job, decisionSignal, { requestId: request.id });
  } catch (err) {
    // The decision is stored either way; deciding again re-sends the signal (see decide()).
    console.warn(`[api] request ${request.id} is ${request.status} but the decision signal to ${job.workflowId} failed: ${(err as Error).message}`);
  }
}
