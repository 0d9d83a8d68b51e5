// Retries of one LLM request. Written here rather than taken from a retry library because the delay
// of each attempt comes from the server (retry-after / retry-after-ms) when it sends one, and the
// wait must end at once when the activity is cancelled. Which failures are retried, and after how
// long, is engine/llm-errors.ts's answer, the same one the activity boundary gets.
import type { JobEventDataByType } from '../core/job-events.js';
import { redactSecrets } from '../core/redact.js';
import { classifyLlmError, DEFAULT_LLM_RETRY, type RetryPolicy } from './llm-errors.js';

/** What a retry tells its caller; the loop records it as is, as the job's llm.retry event. */
export type RetryNotice = JobEventDataByType['llm.retry'];

export async function withLlmRetries<T>(
  fn: () => Promise<T>,
  opts: { policy?: RetryPolicy; signal?: AbortSignal; onRetry?: (n: RetryNotice) => void | Promise<void> },
): Promise<T> {
  const policy = opts.policy ?? DEFAULT_LLM_RETRY;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const verdict = classifyLlmError(err, { attempt, policy });
      if (verdict.kind !== 'retry') throw err;
      const { delayMs } = verdict;
      await opts.onRetry?.({
        attempt,
        delayMs,
        status: verdict.status,
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
