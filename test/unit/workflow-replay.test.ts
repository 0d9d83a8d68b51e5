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
  for (const file of files) {
    // The JSON export of `temporal workflow show --output json`; the worker decodes it itself.
    const history = JSON.parse(await readFile(path.join(DIR, file), 'utf8')) as { events: unknown[] };
    assert.ok(history.events.length > 20, `${file} is a real history`);
    await Worker.runReplayHistory(source, history, file);
  }
});
