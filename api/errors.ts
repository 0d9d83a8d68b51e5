// One error shape for every API failure: {error: {code, message, issues?}}.
// Named errors thrown anywhere below a route are mapped here, so handlers only return successes.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

export interface ApiErrorBody {
  error: { code: string; message: string; issues?: unknown[] };
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly issues?: unknown[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  constructor(message: string) {
    super(404, 'not_found', message);
  }
}

export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(400, 'invalid_request', message, undefined, options);
  }
}

export class UnauthorizedError extends ApiError {
  override name = 'UnauthorizedError';
  constructor(message = 'missing or invalid bearer token') {
    super(401, 'unauthorized', message);
  }
}

/** Temporal could not be reached or refused the start; the job row is marked failed. */
export class WorkflowStartError extends ApiError {
  override name = 'WorkflowStartError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(503, 'workflow_start_failed', message, undefined, options);
  }
}

const HTTP_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  403: 'forbidden',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

// The piece loader lives in another area; match its errors by name so this module stays import-light.
function isNamed(err: unknown, name: string): err is Error & Record<string, unknown> {
  return err instanceof Error && (err.name === name || err.constructor?.name === name);
}

/** Maps any thrown value to a status and body. Unknown errors become a bare 500 (no stack). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isNamed(err, 'YamlLimitError')) {
    const issues = Array.isArray(err.issues) ? (err.issues as unknown[]) : [];
    return new ApiError(422, 'yaml_limit_exceeded', err.message, issues, { cause: err });
  }
  if (isNamed(err, 'PiecePathError')) return new ApiError(400, 'invalid_piece_path', `piece: ${err.message}`, undefined, { cause: err });
  if (isNamed(err, 'WorkspaceRootError')) return new ApiError(400, 'invalid_workspace', err.message, undefined, { cause: err });
  if (isNamed(err, 'PieceError')) {
    const issues = Array.isArray(err.issues) ? (err.issues as unknown[]) : [];
    return new ApiError(422, 'invalid_piece', err.message, issues, { cause: err });
  }
  if (isNamed(err, 'PieceNotFoundError')) return new ApiError(422, 'unknown_piece', err.message, undefined, { cause: err });
  if (isNamed(err, 'JobNotFoundError')) return new ApiError(404, 'not_found', err.message, undefined, { cause: err });
  if (isNamed(err, 'WorkspaceViolationError')) return new ApiError(400, 'invalid_workspace', err.message, undefined, { cause: err });
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    const message = status === 400 && /json/i.test(err.message) ? 'request body is not valid JSON' : err.message || 'bad request';
    return new ApiError(status, HTTP_CODES[status] ?? 'http_error', message, undefined, { cause: err });
  }
  return new ApiError(500, 'internal_error', 'internal error', undefined, { cause: err });
}

/** No answer echoes an unbounded amount of what the caller sent. */
export const MAX_ERROR_MESSAGE_CHARS = 4000;
export const MAX_ERROR_ISSUES = 100;

export function errorBody(e: ApiError): ApiErrorBody {
  const message = e.message.length > MAX_ERROR_MESSAGE_CHARS ? `${e.message.slice(0, MAX_ERROR_MESSAGE_CHARS - 3)}...` : e.message;
  const issues = e.issues?.slice(0, MAX_ERROR_ISSUES);
  return { error: { code: e.code, message, ...(issues ? { issues } : {}) } };
}

/** The same error body outside Hono (the listener's Host/Origin guard). */
export function errorJsonResponse(e: ApiError, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(errorBody(e)), {
    status: e.status,
    headers: { 'content-type': 'application/json; charset=UTF-8', ...headers },
  });
}

export function errorResponse(c: Context, err: unknown): Response {
  const e = toApiError(err);
  if (e.status === 500) {
    // The client sees only "internal error"; the cause goes to the operator's log.
    console.error(`[api] ${c.req.method} ${c.req.path} -> 500:`, e.cause ?? e);
  } else if (e.status > 500) {
    console.error(`[api] ${c.req.method} ${c.req.path} -> ${e.status} ${e.code}: ${e.message}`);
  }
  return c.json(errorBody(e), e.status);
}

/** Formats zod issues as "field: message; field: message" so the client sees which field is wrong. */
export function formatZodIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues
    .map((i) => `${i.path.length ? i.path.map(String).join('.') : 'body'}: ${i.message}`)
    .join('; ');
}
