// Retries of one LLM request. Written here rather than taken from a retry library because the delay
// of each attempt comes from the server (retry-after / retry-after-ms) when it sends one, and the
// wait must end at once when the activity is cancelled.
import OpenAI from 'openai';
import { redactSecrets } from '../core/redact.js';

export const RETRYABLE_STATUSES = new Set([408, 409, 429]);

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest server-requested wait honoured; beyond it the request fails (and Temporal retries later). */
  maxRetryAfterMs?: number;
}

export const DEFAULT_LLM_RETRY: RetryPolicy = { maxAttempts: 6, baseDelayMs: 1_000, maxDelayMs: 60_000, maxRetryAfterMs: 300_000 };

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  status: number | null;
  message: string;
}

export function isRetryableLlmError(err: unknown): boolean {
  if (err instanceof OpenAI.APIUserAbortError) return false;
  if (err instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (err instanceof OpenAI.APIError) {
    const status = err.status;
    return status === undefined || RETRYABLE_STATUSES.has(status) || status >= 500;
  }
  // A stream cut mid-way surfaces as a plain error from the SSE reader.
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

export async function withLlmRetries<T>(
  fn: () => Promise<T>,
  opts: { policy?: RetryPolicy; signal?: AbortSignal; onRetry?: (n: RetryNotice) => void | Promise<void> },
): Promise<T> {
  const policy = opts.policy ?? DEFAULT_LLM_RETRY;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (opts.signal?.aborted || attempt >= policy.maxAttempts || !isRetryableLlmError(err)) throw err;
      const requested = retryAfterMs(err);
      if (requested !== null && requested > (policy.maxRetryAfterMs ?? DEFAULT_LLM_RETRY.maxRetryAfterMs!)) throw err;
      const delayMs = requested ?? backoffMs(attempt, policy);
      await opts.onRetry?.({
        attempt,
        delayMs,
        status: err instanceof OpenAI.APIError ? (err.status ?? null) : null,
        message: redactSecrets(err instanceof Error ? err.message : String(err)),
      });
      await sleep(delayMs, opts.signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
