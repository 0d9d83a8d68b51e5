// npm run record:histories -- NAME: runs the demo job (a question, an approval, three movements) on a fresh
// stack and saves its workflow history to test/fixtures/histories/, where the replay test checks
// that today's workflow code still replays it. Recordings so far: demo-develop (piece in the input),
// demo-develop-resume-status-patch, demo-develop-piece-by-id (ids and hash only, loadJobPiece). Re-record only for a deliberate, versioned change
// (use patched() from @temporalio/workflow for changes running workflows must survive).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ApiClient } from '../cli/api-client.js';
import { driveDemoJob } from '../cli/commands/demo-driver.js';
import { loadConfig } from '../config/config.js';
import type { JobView } from '../core/types.js';
import { getFreePort } from '../infra/ports.js';
import { startStack } from '../infra/stack.js';
import { ensureTemporalCli } from '../infra/temporal-cli.js';
import { startTemporalDevServer } from '../infra/temporal-dev-server.js';
import { startScriptedLlmServer } from '../dev/scripted-llm-server.js';
import { DEMO_INSTRUCTION, DEMO_REPLY, demoModel } from '../dev/demo-model.js';

const OUT = path.resolve('test/fixtures/histories');
// Keep earlier recordings: they are the versions running jobs may still be on. Name new ones.
const NAME = process.argv[2] ?? 'demo-develop';

const base = loadConfig();
const home = await mkdtemp(path.join(os.tmpdir(), 'maestro-record-'));
const cliPath = await ensureTemporalCli(base.home);
const temporal = await startTemporalDevServer({ cliPath, port: 0, headless: true });
const llm = await startScriptedLlmServer({ script: demoModel });
const apiToken = randomBytes(16).toString('hex');
const config = loadConfig({
  ...process.env,
  TEMPORAL_ADDRESS: temporal.address,
  MAESTRO_HOME: home,
  MAESTRO_LLM_BASE_URL: llm.url,
  MAESTRO_API_PORT: String(await getFreePort()),
  DATABASE_URL: '',
  MAESTRO_API_TOKEN: apiToken,
});
const stack = await startStack({ config, temporal: 'connect', worker: true, api: true });
try {
  const api = new ApiClient(stack.apiUrl as string, apiToken);
  const job = await api.post<JobView>('/api/jobs', { piece: 'develop', instruction: DEMO_INSTRUCTION });
  const done = await driveDemoJob(api, job.id, { reply: DEMO_REPLY, approvalNote: 'recorded' }, () => {});
  await stack.client.workflow.getHandle(done.workflowId).result();
  // The CLI's JSON export is the format Temporal's replay tooling reads (historyFromJSON).
  const { stdout } = await promisify(execFile)(
    cliPath,
    ['workflow', 'show', '--workflow-id', done.workflowId, '--address', temporal.address, '--output', 'json'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  await mkdir(OUT, { recursive: true });
  await writeFile(path.join(OUT, `${NAME}.json`), stdout);
  const events = (JSON.parse(stdout) as { events: unknown[] }).events.length;
  console.log(`saved ${events} events of ${done.workflowId} (${done.status}) to ${OUT}/${NAME}.json`);
} finally {
  await stack.stop();
  await llm.stop();
  await temporal.stop();
  await rm(home, { recursive: true, force: true });
}
