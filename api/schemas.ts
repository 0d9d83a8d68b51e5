// Request and response schemas of the HTTP API; they drive validation and the OpenAPI document.
import { z } from '@hono/zod-openapi';
import { JOB_STATUSES } from '../core/types.js';

export const MAX_INSTRUCTION_CHARS = 100_000;
export const MAX_COMMENT_CHARS = 20_000;
export const MAX_PIECE_YAML_CHARS = 200_000;

// Any RFC 4122 layout; the version nibble is not checked so ids from other tools still work.
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'invalid_request' }),
      message: z.string().openapi({ example: 'instruction: Invalid input: expected string, received undefined' }),
      issues: z.array(z.unknown()).optional(),
    }),
  })
  .openapi('Error');

export const JobIdParams = z.object({
  id: z
    .string()
    .regex(UUID_RE, 'must be a UUID')
    .openapi({ param: { name: 'id', in: 'path' }, example: '3f2b8c1e-6a4d-4e3b-9a51-0c7d2e9f8a10' }),
});

export const JobStatusSchema = z.enum(JOB_STATUSES);

export const JobSchema = z
  .object({
    id: z.string(),
    parentId: z.string().nullable(),
    piece: z.string(),
    instruction: z.string(),
    workspace: z.string(),
    status: JobStatusSchema,
    currentMovement: z.string().nullable(),
    waitReason: z.string().nullable(),
    resumeMovement: z.string().nullable(),
    reason: z.string().nullable(),
    summary: z.string().nullable(),
    workflowId: z.string(),
    movementCount: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .openapi('Job');

export const MovementRunSchema = z
  .object({
    id: z.string(),
    movement: z.string(),
    sequence: z.number().int(),
    status: z.string(),
    next: z.string().nullable(),
    summary: z.string().nullable(),
    reason: z.string().nullable(),
    iterations: z.number().int(),
    llmCalls: z.number().int(),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
    totalTokens: z.number().int(),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .openapi('MovementRun');

export const JobDetailSchema = JobSchema.extend({ movements: z.array(MovementRunSchema) }).openapi('JobDetail');

export const SubmitJobBody = z
  .object({
    piece: z.string().min(1).max(4096).optional().openapi({ description: 'a built-in piece name or a path to a YAML file on the server', example: 'chat' }),
    pieceYaml: z.string().min(1).max(MAX_PIECE_YAML_CHARS).optional().openapi({ description: 'the piece itself, as YAML text' }),
    instruction: z.string().min(1).max(MAX_INSTRUCTION_CHARS).openapi({ example: 'Summarise input/report.txt into output/summary.md' }),
    workspace: z.string().min(1).max(4096).optional().openapi({ description: 'workspace folder on the server (absolute, or relative to its cwd); default MAESTRO_HOME/workspaces/<jobId>' }),
    parentId: z.string().regex(UUID_RE, 'must be a UUID').optional(),
  })
  .strict()
  .refine((b) => (b.piece === undefined) !== (b.pieceYaml === undefined), {
    message: 'give exactly one of piece or pieceYaml',
    path: ['piece'],
  })
  .openapi('SubmitJob');

export const ListJobsQuery = z.object({
  status: z
    .string()
    .optional()
    .openapi({ description: `comma-separated statuses: ${JOB_STATUSES.join(', ')}`, example: 'running,waiting_human' }),
  limit: z.coerce.number().int().min(1).max(500).optional().openapi({ example: 50 }),
  parentId: z.string().regex(UUID_RE, 'must be a UUID').optional(),
});

export const JobListSchema = z.object({ jobs: z.array(JobSchema) }).openapi('JobList');

export const CommentSchema = z
  .object({
    id: z.number().int(),
    jobId: z.string(),
    author: z.enum(['user', 'agent', 'system']),
    body: z.string(),
    createdAt: z.string(),
  })
  .openapi('Comment');

export const PostedCommentSchema = CommentSchema.extend({
  signalled: z.boolean().openapi({ description: 'whether the running workflow was told about the comment' }),
}).openapi('PostedComment');

export const CommentBody = z.object({ body: z.string().min(1).max(MAX_COMMENT_CHARS) }).strict().openapi('NewComment');
export const CommentListSchema = z.object({ comments: z.array(CommentSchema) }).openapi('CommentList');

export const EventSchema = z
  .object({
    id: z.number().int(),
    jobId: z.string(),
    movementRunId: z.string().nullable(),
    type: z.string(),
    data: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
  })
  .openapi('Event');

export const EventsQuery = z.object({
  after: z.coerce.number().int().min(0).optional().openapi({ description: 'only events with a larger id' }),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});
export const EventListSchema = z.object({ events: z.array(EventSchema) }).openapi('EventList');

export const PieceSummarySchema = z
  .object({ name: z.string(), description: z.string(), movements: z.array(z.string()) })
  .openapi('PieceSummary');
export const PieceListSchema = z.object({ pieces: z.array(PieceSummarySchema) }).openapi('PieceList');

export const PieceIssueSchema = z
  .object({
    file: z.string(),
    line: z.number().int().nullable(),
    movement: z.string().nullable(),
    field: z.string().nullable(),
    message: z.string(),
  })
  .openapi('PieceIssue');

export const LintBody = z
  .object({ yaml: z.string().max(MAX_PIECE_YAML_CHARS), file: z.string().min(1).max(1024).optional() })
  .strict()
  .openapi('LintRequest');
export const LintResultSchema = z.object({ ok: z.boolean(), issues: z.array(PieceIssueSchema) }).openapi('LintResult');

export const HealthSchema = z.object({ ok: z.boolean(), version: z.string() }).openapi('Health');

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { content: { 'application/json': { schema } }, description };
}

/** The error responses every route may answer with; listed so the OpenAPI document is honest. */
export const ERROR_RESPONSES = {
  400: jsonContent(ErrorSchema, 'invalid request'),
  401: jsonContent(ErrorSchema, 'missing or wrong bearer token'),
  500: jsonContent(ErrorSchema, 'internal error'),
} as const;
