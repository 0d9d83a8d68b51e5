// Determinism across versions: recorded histories (scripts/record-histories.ts) must replay on
// today's workflow code. A failure means a change would break jobs that are running or parked now.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../../worker/workflows-path.js';

const DIR = path.resolve('test/fixtures/histories');

test('recorded job histories replay on the current workflow code', async () => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.json'));
  assert.ok(files.length > 0, 'there are recorded histories');
  const bundlePath = process.env.MAESTRO_WORKFLOW_BUNDLE;
  const source = bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: WORKFLOWS_PATH };
  const shapes = new Set<string>();
  for (const file of files) {
    // The JSON export of `temporal workflow show --output json`; the worker decodes it itself.
    const history = JSON.parse(await readFile(path.join(DIR, file), 'utf8')) as { events: RecordedEvent[] };
    assert.ok(history.events.length > 20, `${file} is a real history`);
    shapes.add(inputShape(history.events));
    await Worker.runReplayHistory(source, history, file);
  }
  // Both sides of the piece-by-id patch: jobs started with the piece in their input (before it)
  // and with ids and the piece hash only (after it).
  assert.ok(shapes.has('piece'), 'a history whose input carries the piece');
  assert.ok(shapes.has('pieceHash'), 'a history whose input carries ids and the piece hash');
});

interface RecordedEvent {
  workflowExecutionStartedEventAttributes?: { input?: { payloads?: Array<{ data?: string }> } };
}

function inputShape(events: RecordedEvent[]): string {
  const data = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data ?? '';
  const input = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as Record<string, unknown>;
  return 'pieceHash' in input ? 'pieceHash' : 'piece' in input ? 'piece' : 'unknown';
}
