// Jobs: submit, list, show, cancel, and the event feed `maestro run --follow` polls.
import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { WorkflowNotFoundError } from '@temporalio/client';
import { JOB_STATUSES, TERMINAL_STATUSES } from '../../core/types.js';
import type { JobStatus } from '../../core/types.js';
import { listEvents, listJobs, listMovementRuns, listRequests } from '../../db/repositories/index.js';
import { ApiError, InvalidRequestError } from '../errors.js';
import { requireJob, submitJob } from '../job-actions.js';
import { JobWithRequestsSchema } from '../approval-schemas.js';
import type { JobServiceDeps } from '../job-actions.js';
import {
  ERROR_RESPONSES,
  ErrorSchema,
  EventListSchema,
  EventsQuery,
  JobIdParams,
  JobListSchema,
  JobSchema,
  ListJobsQuery,
  SubmitJobBody,
  jsonContent,
} from '../schemas.js';

const notFound = { 404: jsonContent(ErrorSchema, 'no such job') };

const submitRoute = createRoute({
  method: 'post',
  path: '/api/jobs',
  tags: ['jobs'],
  summary: 'Submit a job',
  request: { body: { content: { 'application/json': { schema: SubmitJobBody } }, required: true } },
  responses: {
    201: jsonContent(JobSchema, 'the job, queued'),
    ...ERROR_RESPONSES,
    422: jsonContent(
      ErrorSchema,
      'unknown_piece / invalid_piece (error.issues lists the problems) / yaml_limit_exceeded (too big, too deep, too many aliases; refused before parsing)',
    ),
    503: jsonContent(ErrorSchema, 'Temporal refused or could not be reached; the job is marked failed'),
  },
});

/** The statuses of a parked job: it waits for a person or for its subtasks and holds no worker slot. */
export const WAITING_STATUSES: JobStatus[] = ['waiting_human', 'waiting_subtasks'];

const ListQuery = ListJobsQuery.extend({
  waiting: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ description: 'true: only parked jobs (waiting_human, waiting_subtasks); combines with status' }),
});

const CancelResultSchema = JobSchema.extend({
  cancelRequested: z.literal(true).openapi({ description: 'Temporal accepted the cancellation; status becomes cancelled shortly' }),
}).openapi('CancelRequested');

const listRoute = createRoute({
  method: 'get',
  path: '/api/jobs',
  tags: ['jobs'],
  summary: 'List jobs, newest first',
  request: { query: ListQuery },
  responses: { 200: jsonContent(JobListSchema, 'jobs'), ...ERROR_RESPONSES },
});

const showRoute = createRoute({
  method: 'get',
  path: '/api/jobs/{id}',
  tags: ['jobs'],
  summary: 'A job with its movement runs and its approval requests',
  request: { params: JobIdParams },
  responses: { 200: jsonContent(JobWithRequestsSchema, 'the job'), ...ERROR_RESPONSES, ...notFound },
});

const cancelRoute = createRoute({
  method: 'post',
  path: '/api/jobs/{id}/cancel',
  tags: ['jobs'],
  summary: 'Cancel a job (Temporal cancellation: a running movement stops, a parked job ends at once)',
  request: { params: JobIdParams },
  responses: {
    202: jsonContent(CancelResultSchema, 'cancellation requested; the job as it is now'),
    ...ERROR_RESPONSES,
    ...notFound,
    409: jsonContent(ErrorSchema, 'the job has ended already'),
    503: jsonContent(ErrorSchema, 'Temporal could not be reached'),
  },
});

const eventsRoute = createRoute({
  method: 'get',
  path: '/api/jobs/{id}/events',
  tags: ['jobs'],
  summary: "A job's events, oldest first (poll with ?after=<last id>)",
  request: { params: JobIdParams, query: EventsQuery },
  responses: { 200: jsonContent(EventListSchema, 'events'), ...ERROR_RESPONSES, ...notFound },
});

const TEMPORAL_CALL_MS = 10_000;

function finished(id: string, status: string): ApiError {
  return new ApiError(409, 'job_finished', `job ${id} cannot be cancelled: it has already ended${status === 'ended' ? '' : ` (${status})`}`);
}

export function parseStatuses(raw: string | undefined): JobStatus[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const parts = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = parts.filter((p) => !(JOB_STATUSES as readonly string[]).includes(p));
  if (bad.length) throw new InvalidRequestError(`status: unknown ${bad.join(', ')} (one of ${JOB_STATUSES.join(', ')})`);
  return parts as JobStatus[];
}

export function registerJobRoutes(app: OpenAPIHono, deps: JobServiceDeps): void {
  app.openapi(submitRoute, async (c) => {
    const body = c.req.valid('json');
    const job = await submitJob(deps, { ...body, piece: body.piece });
    return c.json(job, 201);
  });

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    let status = parseStatuses(q.status);
    if (q.waiting === 'true') status = (status ?? WAITING_STATUSES).filter((s) => WAITING_STATUSES.includes(s));
    const jobs = await listJobs(deps.db, { status, limit: q.limit ?? 50, parentId: q.parentId });
    return c.json({ jobs }, 200);
  });

  app.openapi(showRoute, async (c) => {
    const { id } = c.req.valid('param');
    const job = await requireJob(deps.db, id);
    const [movements, requests] = await Promise.all([listMovementRuns(deps.db, id), listRequests(deps.db, id)]);
    return c.json({ ...job, movements, requests }, 200);
  });

  app.openapi(cancelRoute, async (c) => {
    const { id } = c.req.valid('param');
    const job = await requireJob(deps.db, id);
    if (TERMINAL_STATUSES.includes(job.status)) throw finished(job.id, job.status);
    try {
      await deps.client.withDeadline(Date.now() + (deps.temporalTimeoutMs ?? TEMPORAL_CALL_MS), () =>
        deps.client.workflow.getHandle(job.workflowId).cancel(),
      );
    } catch (err) {
      // The workflow closed after the row was read (it is writing its final status now).
      if (err instanceof WorkflowNotFoundError) throw finished(job.id, 'ended');
      throw new ApiError(503, 'temporal_unavailable', `could not cancel job ${job.id}: ${(err as Error).message}`, undefined, { cause: err });
    }
    return c.json({ ...job, cancelRequested: true as const }, 202);
  });

  app.openapi(eventsRoute, async (c) => {
    const { id } = c.req.valid('param');
    const q = c.req.valid('query');
    await requireJob(deps.db, id);
    const events = await listEvents(deps.db, id, { afterId: q.after, limit: q.limit ?? 200 });
    return c.json({ events }, 200);
  });
}
