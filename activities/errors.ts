// Named errors of the activities and their translation into Temporal failures at the boundary:
// non-retryable where retrying cannot help (bad request to the LLM, missing job, no model configured).
import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';
import { redactError } from '../core/redact.js';
import { LlmNotConfiguredError } from '../engine/llm-client.js';

export class JobNotFoundError extends Error {
  override name = 'JobNotFoundError';
}

export class MovementNotFoundError extends Error {
  override name = 'MovementNotFoundError';
}

/** The job's workspace path no longer leads to the folder it was created as (a symlink was swapped in). */
export class WorkspaceMovedError extends Error {
  override name = 'WorkspaceMovedError';
}

/** The LLM endpoint refused the request itself (400/401/403/404/422): the same request will fail again. */
export class LlmRequestRejectedError extends Error {
  override name = 'LlmRequestRejectedError';
  constructor(
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const NON_RETRYABLE_LLM_STATUSES = new Set([400, 401, 403, 404, 422]);

export function toActivityFailure(err: unknown): unknown {
  // Whatever leaves the activity lands in workflow history and the worker's log: no secrets in it.
  redactError(err);
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof OpenAI.APIError && err.status !== undefined && NON_RETRYABLE_LLM_STATUSES.has(err.status)) {
    const rejected = new LlmRequestRejectedError(err.status, `LLM endpoint answered ${err.status}: ${err.message}`, { cause: err });
    return ApplicationFailure.create({ message: rejected.message, type: rejected.name, nonRetryable: true, cause: err });
  }
  if (err instanceof JobNotFoundError || err instanceof MovementNotFoundError || err instanceof WorkspaceMovedError || err instanceof LlmNotConfiguredError) {
    return ApplicationFailure.create({ message: err.message, type: err.name, nonRetryable: true, cause: err });
  }
  return err;
}
