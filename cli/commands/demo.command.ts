// `npm run demo`: the whole path of a job on the embedded stack: dev server, PGlite, worker, API,
// a develop job submitted over HTTP, each movement printed as it happens, then where to look.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../config/config.js';
import type { JobView } from '../../core/types.js';
import { startStack } from '../../infra/stack.js';
import { DEMO_INSTRUCTION, DEMO_REPLY, demoModel } from '../../dev/demo-model.js';
import { startScriptedLlmServer } from '../../dev/scripted-llm-server.js';
import { ApiClient } from '../api-client.js';
import { driveDemoJob } from './demo-driver.js';

export async function runDemo(): Promise<number> {
  const config = loadConfig();
  const say = (line: string) => console.log(line);
  const log = (line: string) => console.error(`[maestro] ${line}`);
  const scripted = config.llm.baseUrl ? undefined : await startScriptedLlmServer({ script: demoModel });
  if (scripted) {
    config.llm.baseUrl = scripted.url;
    say(`Model: the scripted demo model at ${scripted.url} (set MAESTRO_LLM_BASE_URL to use a real one)`);
  } else {
    say(`Model: ${config.llm.model} at ${config.llm.baseUrl}`);
  }
  say('Starting Temporal dev server, database, worker and API...');
  const stack = await startStack({ config, temporal: 'start', worker: true, api: true, log });
  try {
    const api = new ApiClient(stack.apiUrl as string, config.api.token);
    const submitted = await api.post<JobView>('/api/jobs', { piece: 'develop', instruction: DEMO_INSTRUCTION });
    say(`\nJob ${submitted.id} (piece develop, workspace ${submitted.workspace})`);
    say(`Task: ${DEMO_INSTRUCTION}\n`);
    const job = await driveDemoJob(api, submitted.id, { reply: DEMO_REPLY, approvalNote: 'granted by the demo' }, say);
    // The row turns terminal just before the workflow closes: let it close before the worker stops.
    await stack.client.workflow.getHandle(job.workflowId).result().catch(() => undefined);
    say(`\nFinal status: ${job.status}${job.reason ? ` (${job.reason})` : ''}`);
    if (job.summary) say(`Summary: ${job.summary}`);
    const files = await listFiles(path.join(job.workspace, 'output'));
    say(`Files written in ${path.join(job.workspace, 'output')}:${files.length ? '' : ' (none)'}`);
    for (const f of files) say(`  output/${f}`);
    if (stack.temporalUiUrl) {
      say(`\nTemporal UI: ${stack.temporalUiUrl}/namespaces/${config.temporal.namespace}/workflows/${job.workflowId}`);
    }
    say('Reopen it on the same .maestro/ state with: npm start   (= maestro dev)');
    return job.status === 'completed' ? 0 : 1;
  } finally {
    await stack.stop();
    await scripted?.stop();
  }
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) out.push(...(await listFiles(path.join(dir, e.name), `${prefix}${e.name}/`)));
    else out.push(`${prefix}${e.name}`);
  }
  return out;
}
