// Which failures of an LLM request are worth repeating: one answer for both retry layers, the
// loop's own retries of a request (engine/llm-retry.ts) and Temporal's retry of the whole movement
// (activities/errors.ts). So a request the loop gives up on as refused is not sent again by
// Temporal, and a transient failure the loop ran out of attempts for is retried later by Temporal.
import OpenAI from 'openai';
import { NonRetryableError } from '../core/errors.js';

/** "Not now" rather than "no": timeout, conflict, rate limit (and every 5xx). */
export const TRANSIENT_STATUSES = new Set([408, 409, 429]);

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest server-requested wait honoured; beyond it the request fails (and Temporal retries later). */
  maxRetryAfterMs?: number;
}

export const DEFAULT_LLM_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 1_000, maxDelayMs: 60_000, maxRetryAfterMs: 300_000 };

export type LlmErrorVerdict =
  /** Transient and within the loop's budget: send the same request again after delayMs. */
  | { kind: 'retry'; status: number | null; delayMs: number }
  /** Transient, but out of attempts or asked to wait longer than we honour: the loop gives up and
   *  Temporal retries the movement later (from its checkpoint). */
  | { kind: 'exhausted'; status: number | null }
  /** The endpoint refused the request itself: the same request fails again, so no layer retries it. */
  | { kind: 'final'; status: number }
  /** Not a failure of the endpoint (a cancellation, a bug of ours): not the LLM layers' to decide. */
  | { kind: 'other' };

export interface RetryAttempt {
  /** 1 for the first try. */
  attempt: number;
  policy: RetryPolicy;
  random?: () => number;
  now?: number;
}

/**
 * Classifies an error from the openai client or the network. With the loop's attempt it says
 * whether to retry now and after how long; without one (the activity boundary, after the loop had
 * its go) a transient error counts as exhausted.
 */
export function classifyLlmError(err: unknown, at?: RetryAttempt): LlmErrorVerdict {
  if (err instanceof OpenAI.APIUserAbortError) return { kind: 'other' };
  let status: number | null = null;
  if (err instanceof OpenAI.APIError) {
    // APIConnectionError (timeouts included) is an APIError without a status: transient.
    if (err.status !== undefined && !TRANSIENT_STATUSES.has(err.status) && err.status < 500) return { kind: 'final', status: err.status };
    status = err.status ?? null;
  } else if (!isStreamCut(err)) {
    return { kind: 'other' };
  }
  if (!at || at.attempt >= at.policy.maxAttempts) return { kind: 'exhausted', status };
  const requested = retryAfterMs(err, at.now);
  if (requested !== null && requested > (at.policy.maxRetryAfterMs ?? DEFAULT_LLM_RETRY.maxRetryAfterMs!)) return { kind: 'exhausted', status };
  return { kind: 'retry', status, delayMs: requested ?? backoffMs(at.attempt, at.policy, at.random) };
}

/** A stream cut mid-way surfaces as a plain error from the SSE reader. */
function isStreamCut(err: unknown): boolean {
  return err instanceof Error && /terminated|ECONNRESET|socket hang up|premature close/i.test(err.message);
}

/** The server's requested delay in ms, from retry-after-ms or retry-after (seconds or an HTTP date). */
export function retryAfterMs(err: unknown, now = Date.now()): number | null {
  if (!(err instanceof OpenAI.APIError) || !err.headers) return null;
  const headers = err.headers as unknown as { get(name: string): string | null };
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0 && headers.get('retry-after-ms') !== null) return ms;
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function backoffMs(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp * (0.75 + random() * 0.25));
}

export class LlmNotConfiguredError extends NonRetryableError {
  override name = 'LlmNotConfiguredError';
}

/** The LLM endpoint refused the request itself (a 'final' status): the same request will fail again. */
export class LlmRequestRejectedError extends NonRetryableError {
  override name = 'LlmRequestRejectedError';
  constructor(
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
