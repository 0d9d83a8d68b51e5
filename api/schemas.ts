// Request and response schemas of the HTTP API; they drive validation and the OpenAPI document.
import { z } from '@hono/zod-openapi';
import { JOB_STATUSES } from '../core/types.js';

export const MAX_INSTRUCTION_CHARS = 100_000;
export const MAX_COMMENT_CHARS = 20_000;
export const MAX_PIECE_YAML_CHARS = 200_000;

// Any RFC 4122 layout; the version nibble is not checked so ids from other tools still work.
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A UUID string, documented as `format: uuid` with its pattern. */
export const uuid = () => z.string().regex(UUID_RE, 'must be a UUID').openapi({ format: 'uuid', pattern: UUID_RE.source });
export const MAX_PATH_CHARS = 4096;

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
  id: uuid().openapi({ param: { name: 'id', in: 'path' }, example: '3f2b8c1e-6a4d-4e3b-9a51-0c7d2e9f8a10' }),
});

export const JobStatusSchema = z.enum(JOB_STATUSES);

export const JobSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid' }),
    parentId: z.string().openapi({ format: 'uuid' }).nullable(),
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
    piece: z
      .string()
      .min(1)
      .max(MAX_PATH_CHARS)
      .optional()
      .openapi({
        description:
          'a built-in piece name, or the path of a .yaml/.yml file on the server inside a pieces directory (MAESTRO_PIECES_DIRS, after symlinks); otherwise 400 invalid_piece_path',
        example: 'chat',
      }),
    pieceYaml: z
      .string()
      .min(1)
      .max(MAX_PIECE_YAML_CHARS)
      .optional()
      .openapi({ description: 'the piece itself, as YAML text; refused (422 yaml_limit_exceeded) past 512 KiB, 48 levels of nesting, 50 aliases or 5000 nodes' }),
    instruction: z.string().min(1).max(MAX_INSTRUCTION_CHARS).openapi({ example: 'Summarise input/report.txt into output/summary.md' }),
    workspace: z
      .string()
      .min(1)
      .max(MAX_PATH_CHARS)
      .optional()
      .openapi({
        description:
          'workspace folder on the server, strictly inside a workspace root (MAESTRO_WORKSPACE_ROOTS, after symlinks; relative paths are taken inside the first root; no ".." segments); otherwise 400 invalid_workspace. Default MAESTRO_HOME/workspaces/<jobId>',
      }),
    parentId: uuid().optional(),
  })
  .strict()
  .refine((b) => (b.piece === undefined) !== (b.pieceYaml === undefined), {
    message: 'give exactly one of piece or pieceYaml',
    path: ['piece'],
  })
  .openapi('SubmitJob', {
    // The refinement above, stated for clients: exactly one of the two piece forms.
    oneOf: [
      { required: ['piece'], not: { required: ['pieceYaml'] } },
      { required: ['pieceYaml'], not: { required: ['piece'] } },
    ],
  });

export const ListJobsQuery = z.object({
  status: z
    .string()
    .max(300)
    .optional()
    .openapi({ description: `comma-separated statuses: ${JOB_STATUSES.join(', ')}`, example: 'running,waiting_human' }),
  limit: z.coerce.number().int().min(1).max(500).optional().openapi({ example: 50 }),
  parentId: uuid().optional(),
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

export const CommentBody = z
  .object({ body: z.string().min(1).max(MAX_COMMENT_CHARS).openapi({ description: 'at most 1000 person comments per job (409 too_many_comments past that)' }) })
  .strict()
  .openapi('NewComment');
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
  after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({ description: 'only events with a larger id' }),
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
  .object({
    yaml: z.string().max(MAX_PIECE_YAML_CHARS).openapi({ description: 'refused (422 yaml_limit_exceeded) past 512 KiB, 48 levels of nesting, 50 aliases or 5000 nodes' }),
    file: z.string().min(1).max(255).optional().openapi({ description: 'the name to report issues under' }),
  })
  .strict()
  .openapi('LintRequest');
export const LintResultSchema = z.object({ ok: z.boolean(), issues: z.array(PieceIssueSchema).max(51) }).openapi('LintResult');

export const HealthSchema = z.object({ ok: z.boolean(), version: z.string() }).openapi('Health');

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { content: { 'application/json': { schema } }, description };
}

/** The error responses every route may answer with; listed so the OpenAPI document is honest. */
export const ERROR_RESPONSES = {
  400: jsonContent(ErrorSchema, 'invalid request'),
  401: jsonContent(ErrorSchema, 'missing or wrong bearer token'),
  403: jsonContent(ErrorSchema, 'forbidden_origin: the request carries an Origin that is not the API\'s own'),
  413: jsonContent(ErrorSchema, 'payload_too_large: the body is over 2 MiB'),
  421: jsonContent(ErrorSchema, 'misdirected_request: the Host header is not one of the API\'s own names'),
  500: jsonContent(ErrorSchema, 'internal error'),
} as const;
