import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startLlmHeartbeat } from '../../engine/llm-heartbeat.js';
import { waitFor } from '../helpers/wait-for.js';

test('beats while the model is silent but recent, and stops once it has stalled', async () => {
  let beats = 0;
  const hb = startLlmHeartbeat(() => (beats += 1), 300, 20);
  try {
    await waitFor(() => beats >= 3, { timeoutMs: 2_000, message: 'no beats while silent' });
    // After the stall window no more beats come, so the heartbeat timeout can catch a hang.
    await waitFor(
      async () => {
        const before = beats;
        await new Promise((r) => setTimeout(r, 150));
        return beats === before;
      },
      { timeoutMs: 3_000, message: 'kept beating after the stall window' },
    );
    const stalled = beats;
    hb.alive(); // a chunk: beating resumes
    assert.equal(beats, stalled + 1, 'a chunk beats at once');
    await waitFor(() => beats >= stalled + 3, { timeoutMs: 2_000, message: 'did not resume after a chunk' });
  } finally {
    hb.stop();
  }
});
