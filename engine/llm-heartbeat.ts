// Heartbeats while the model thinks. Cancellation reaches an activity only through a heartbeat, so a
// long silent wait (prompt processing before the first token) must still heartbeat, or a cancelled
// job's LLM call would run to its end. But a stream that has stalled must STOP heartbeating, so that
// the activity's heartbeat timeout catches the hang and the retried attempt resumes from the
// checkpoint. So: beat every few seconds, but only while the last sign of life is recent.
export const LLM_BEAT_INTERVAL_MS = 2_000;

export interface LlmHeartbeat {
  /** Call on every chunk (and when a request starts): a sign of life. */
  alive(): void;
  stop(): void;
}

export function startLlmHeartbeat(beat: () => void, stallMs: number, intervalMs = LLM_BEAT_INTERVAL_MS): LlmHeartbeat {
  let last = Date.now();
  const timer = setInterval(() => {
    if (Date.now() - last < stallMs) beat();
  }, Math.min(intervalMs, Math.max(100, Math.floor(stallMs / 2))));
  timer.unref?.();
  return {
    alive() {
      last = Date.now();
      beat();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
