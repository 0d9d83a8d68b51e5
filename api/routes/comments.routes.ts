// Comments: a person's replies to a job. Stored first, then the workflow is signalled.
import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { listComments } from '../../db/repositories/index.js';
import { addUserComment, requireJob } from '../job-actions.js';
import type { JobServiceDeps } from '../job-actions.js';
import {
  CommentBody,
  CommentListSchema,
  ERROR_RESPONSES,
  ErrorSchema,
  JobIdParams,
  PostedCommentSchema,
  jsonContent,
} from '../schemas.js';

const notFound = { 404: jsonContent(ErrorSchema, 'no such job') };

const postRoute = createRoute({
  method: 'post',
  path: '/api/jobs/{id}/comments',
  tags: ['comments'],
  summary: 'Add a comment (a reply to a waiting job wakes it)',
  request: {
    params: JobIdParams,
    body: { content: { 'application/json': { schema: CommentBody } }, required: true },
  },
  responses: {
    201: jsonContent(PostedCommentSchema, 'the stored comment'),
    ...ERROR_RESPONSES,
    ...notFound,
    409: jsonContent(ErrorSchema, 'too_many_comments: the job has 1000 comments from people already'),
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/api/jobs/{id}/comments',
  tags: ['comments'],
  summary: "A job's comments, oldest first",
  request: { params: JobIdParams },
  responses: { 200: jsonContent(CommentListSchema, 'comments'), ...ERROR_RESPONSES, ...notFound },
});

export function registerCommentRoutes(app: OpenAPIHono, deps: JobServiceDeps): void {
  app.openapi(postRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { body } = c.req.valid('json');
    const comment = await addUserComment(deps, id, body);
    return c.json(comment, 201);
  });

  app.openapi(listRoute, async (c) => {
    const { id } = c.req.valid('param');
    await requireJob(deps.db, id);
    const comments = await listComments(deps.db, id);
    return c.json({ comments }, 200);
  });
}
