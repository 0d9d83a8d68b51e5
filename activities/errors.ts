// The translation of what leaves an activity into a Temporal failure. Non-retryable where retrying
// cannot help: an error marked NonRetryableError where it is declared (core/errors.ts), or an LLM
// request the endpoint refused (engine/llm-errors.ts decides which, for the loop's retries too).
import { ApplicationFailure } from '@temporalio/activity';
import { NonRetryableError } from '../core/errors.js';
import { redactError } from '../core/redact.js';
import { classifyLlmError, LlmRequestRejectedError } from '../engine/llm-errors.js';

export class MovementNotFoundError extends NonRetryableError {
  override name = 'MovementNotFoundError';
}

/** The job's workspace path no longer leads to the folder it was created as (a symlink was swapped in). */
export class WorkspaceMovedError extends NonRetryableError {
  override name = 'WorkspaceMovedError';
}

/** Ends the activity for good: Temporal does not retry it. */
export function nonRetryableFailure(err: Error, cause: Error = err): ApplicationFailure {
  return ApplicationFailure.create({ message: err.message, type: err.name, nonRetryable: true, cause });
}

export function toActivityFailure(err: unknown): unknown {
  // Whatever leaves the activity lands in workflow history and the worker's log: no secrets in it.
  redactError(err);
  if (err instanceof ApplicationFailure) return err;
  const llm = classifyLlmError(err);
  // 'final' is only ever an APIError; the instanceof is for the compiler.
  if (llm.kind === 'final' && err instanceof Error) {
    const message = `LLM endpoint answered ${llm.status}: ${err.message}`;
    return nonRetryableFailure(new LlmRequestRejectedError(llm.status, message, { cause: err }), err);
  }
  if (err instanceof NonRetryableError) return nonRetryableFailure(err);
  return err;
}
