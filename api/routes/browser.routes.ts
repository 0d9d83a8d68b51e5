// Browser waits (the WAITING_HUMAN_BROWSER park, docs/operations.md): a person finished a login in a
// job's browser, or solved the captcha screen of a shared space that any number of jobs are stopped at.
import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { JobView } from '../../core/types.js';
import { listCaptchaWaiters, setCaptchaSpace } from '../../db/repositories/index.js';
import { browserResolvedSignal } from '../../core/job-workflow-contract.js';
import { ApiError } from '../errors.js';
import { requireJob, signalJob, type JobServiceDeps } from '../job-actions.js';
import { ERROR_RESPONSES, ErrorSchema, JobIdParams, jsonContent } from '../schemas.js';

const BROWSER_WAITS = ['browser_login', 'captcha'];

const ResumedOneSchema = z.object({ resumed: z.literal(true) }).openapi('BrowserResolved');
const ResumedCountSchema = z.object({ resumed: z.number().int() }).openapi('CaptchaPoolResolved');
const CaptchaPoolBody = z
  .object({ spaceId: z.string().trim().min(1).max(200).openapi({ example: 'team-search' }) })
  .strict()
  .openapi('CaptchaPoolResolve');

const resolvedRoute = createRoute({
  method: 'post',
  path: '/api/jobs/{id}/browser/resolved',
  tags: ['browser'],
  summary: 'The person finished in the browser (login or captcha): resume the job',
  request: { params: JobIdParams },
  responses: {
    200: jsonContent(ResumedOneSchema, 'the job was signalled and resumes'),
    ...ERROR_RESPONSES,
    404: jsonContent(ErrorSchema, 'no such job'),
    409: jsonContent(ErrorSchema, 'the job is not waiting on a browser login or captcha'),
    503: jsonContent(ErrorSchema, 'Temporal could not be reached'),
  },
});

const poolRoute = createRoute({
  method: 'post',
  path: '/api/captcha-pool/resolve',
  tags: ['browser'],
  summary: "A space's captcha screen was solved: resume every job waiting on it",
  request: { body: { content: { 'application/json': { schema: CaptchaPoolBody } }, required: true } },
  responses: { 200: jsonContent(ResumedCountSchema, 'how many waiting jobs were resumed'), ...ERROR_RESPONSES },
});

function notWaiting(job: JobView): ApiError {
  const now = job.status === 'waiting_human' ? `waiting on ${job.waitReason}` : job.status;
  return new ApiError(409, 'not_waiting_on_browser', `job ${job.id} is not waiting on a browser login or captcha (it is ${now})`);
}

/** Signals browserResolved; false when the workflow is gone (it ended meanwhile). */
async function signalResolved(deps: JobServiceDeps, job: JobView, spaceId: string | null): Promise<boolean> {
  try {
    if ((await signalJob(deps, job, browserResolvedSignal, { spaceId })) === 'gone') return false;
  } catch (err) {
    throw new ApiError(503, 'temporal_unavailable', `could not signal job ${job.id}: ${(err as Error).message}`, undefined, { cause: err });
  }
  // The job is no longer stopped at that screen. Cleared after the signal, so a failed signal leaves
  // the job findable by the next pool resolve.
  if (job.waitReason === 'captcha') await setCaptchaSpace(deps.db, job.id, null);
  return true;
}

export function registerBrowserRoutes(app: OpenAPIHono, deps: JobServiceDeps): void {
  app.openapi(resolvedRoute, async (c) => {
    const { id } = c.req.valid('param');
    const job = await requireJob(deps.db, id);
    // The row is written before the workflow starts waiting, so a signal sent now is not missed.
    if (job.status !== 'waiting_human' || !BROWSER_WAITS.includes(job.waitReason ?? '')) throw notWaiting(job);
    if (!(await signalResolved(deps, job, null))) {
      throw new ApiError(409, 'not_waiting_on_browser', `job ${job.id} is not waiting any more: its workflow has ended`);
    }
    return c.json({ resumed: true as const }, 200);
  });

  app.openapi(poolRoute, async (c) => {
    const { spaceId } = c.req.valid('json');
    const waiters = await listCaptchaWaiters(deps.db, spaceId);
    const results = await Promise.allSettled(waiters.map((job) => signalResolved(deps, job, spaceId)));
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected') console.warn(`[api] captcha-pool resolve: job ${waiters[i].id} not signalled: ${(r.reason as Error).message}`);
    }
    const resumed = results.filter((r) => r.status === 'fulfilled' && r.value).length;
    return c.json({ resumed }, 200);
  });
}
