// Called by scripts/test.ts before the test files run: bundles the workflows once for the whole run,
// so every test worker (in-process or child) loads the same bundle instead of running webpack again.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig, homePaths } from '../config/config.js';
import { WORKFLOWS_PATH } from '../worker/workflows-path.js';

export async function setup(env: NodeJS.ProcessEnv): Promise<void> {
  if (env.MAESTRO_WORKFLOW_BUNDLE) return;
  const started = Date.now();
  const quiet = { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as any;
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet });
  const file = path.join(homePaths(loadConfig(env).home).cache, 'workflow-bundle.test.js');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, code);
  env.MAESTRO_WORKFLOW_BUNDLE = file;
  console.log(`workflow bundle built once for this run (${Date.now() - started} ms)`);
}
