// Poll a condition with a deadline instead of sleeping a guessed amount of time.

export class WaitForTimeoutError extends Error {
  override name = 'WaitForTimeoutError';
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  opts: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      lastError = undefined;
    } catch (err) {
      // A condition that throws (row not there yet, server still starting) is retried until the end.
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new WaitForTimeoutError(`${opts.message ?? 'condition not met'} within ${timeoutMs} ms${why}`, { cause: lastError });
    }
    await new Promise((r) => setTimeout(r, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}
