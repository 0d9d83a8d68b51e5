// The workflows bundle as Temporal's sandbox needs it: no Node modules anywhere in the graph.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../../worker/workflows-path.js';

function recordingLogger(lines: string[]) {
  const rec = (m: string) => void lines.push(m);
  return { trace() {}, debug() {}, info: rec, warn: rec, error: rec, log: rec } as any;
}

describe('workflow bundle', () => {
  test('workflows/ bundles with no Node modules', async () => {
    const lines: string[] = [];
    const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: recordingLogger(lines) });
    assert.ok(code.includes('jobWorkflow'));
    for (const mod of ['node:fs', 'node:child_process', 'pg', 'openai', 'kysely', '@temporalio/client']) {
      assert.ok(!code.includes(`require("${mod}")`) && !code.includes(`"./node_modules/${mod}/`), `bundle pulls in ${mod}`);
    }
  });

  test('a workflow importing a Node module is refused by the bundler', async () => {
    // Inside the repository so that @temporalio/workflow resolves from its node_modules.
    const parent = path.resolve('.maestro/tmp');
    await mkdir(parent, { recursive: true });
    const dir = await mkdtemp(path.join(parent, 'bundle-'));
    try {
      const file = path.join(dir, 'bad.workflow.ts');
      await writeFile(file, "import fs from 'node:fs';\nexport async function bad() { return fs.existsSync('/'); }\n");
      const lines: string[] = [];
      await assert.rejects(bundleWorkflowCode({ workflowsPath: file, logger: recordingLogger(lines) }));
      assert.match(lines.join('\n'), /node:fs/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
