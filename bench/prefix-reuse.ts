// npm run bench:prefix: runs the develop piece on the real stack with the scripted model and prints,
// for each LLM request, how much of its rendered prompt is a common prefix with the previous request
// (what a prompt cache such as llama-server's can reuse), and where the first difference falls.
// The baseline, measured on the same requests, is the naive ordering (time block first).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { submitJob } from '../api/job-actions.js';
import { loadConfig } from '../config/config.js';
import { startStack } from '../infra/stack.js';
import { ensureTemporalCli } from '../infra/temporal-cli.js';
import { startTemporalDevServer } from '../infra/temporal-dev-server.js';
import { DEMO_INSTRUCTION, straightDemoModel } from '../dev/demo-model.js';
import { currentMovementOf } from '../dev/movement-script.js';
import { startScriptedLlmServer } from '../dev/scripted-llm-server.js';
import { comparePrefix, differenceAfterJobContext, naiveOrdering, type RecordedChat } from './prompt-prefix.js';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

async function main(): Promise<number> {
  const base = loadConfig();
  const home = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-'));
  const cliPath = await ensureTemporalCli(base.home, (l) => console.error(l));
  const temporal = await startTemporalDevServer({ cliPath, port: 0, headless: true });
  const llm = await startScriptedLlmServer({ script: straightDemoModel });
  const config = loadConfig({ ...process.env, TEMPORAL_ADDRESS: temporal.address, MAESTRO_HOME: home, MAESTRO_LLM_BASE_URL: llm.url, DATABASE_URL: '' });
  const stack = await startStack({ config, temporal: 'connect', worker: true });
  try {
    const job = await submitJob({ db: stack.db, client: stack.client, config }, { piece: 'develop', instruction: DEMO_INSTRUCTION });
    const result = await stack.client.workflow.getHandle(job.workflowId).result();
    console.log(`develop job ${job.id}: ${result.status}, ${llm.requests.length} LLM requests\n`);
    return report(llm.requests.map((r) => ({ chat: r.body as RecordedChat, movement: currentMovementOf(r) })));
  } finally {
    await stack.stop();
    await llm.stop();
    await temporal.stop();
    await rm(home, { recursive: true, force: true });
  }
}

function report(requests: Array<{ chat: RecordedChat; movement: string }>): number {
  const rows: string[] = [['#', 'movement', 'after', 'reused', 'append-only', 'first difference', 'naive reused', 'naive first difference'].join(' | ')];
  const within = { stable: [] as number[], naive: [] as number[], appendOnly: 0, count: 0 };
  const after = { stable: [] as number[], naive: [] as number[], pastJobContext: 0, count: 0 };
  for (let i = 1; i < requests.length; i += 1) {
    const prev = requests[i - 1];
    const cur = requests[i];
    const stable = comparePrefix(prev.chat, cur.chat);
    const naive = comparePrefix(naiveOrdering(prev.chat), naiveOrdering(cur.chat));
    const transition = prev.movement !== cur.movement;
    const bucket = transition ? after : within;
    bucket.stable.push(stable.share);
    bucket.naive.push(naive.share);
    bucket.count += 1;
    if (!transition && stable.appendOnly) within.appendOnly += 1;
    if (transition && differenceAfterJobContext(stable.firstDifference)) after.pastJobContext += 1;
    rows.push(
      [
        i + 1,
        cur.movement,
        transition ? `transition from ${prev.movement}` : 'same movement',
        pct(stable.share),
        stable.appendOnly ? 'yes' : 'no',
        stable.firstDifference ?? '-',
        pct(naive.share),
        naive.firstDifference ?? '-',
      ].join(' | '),
    );
  }
  console.log(rows.join('\n'));
  console.log('\nsummary (share of each rendered request that is a common prefix with the previous one)');
  console.log(`  within movements:   stable ${pct(mean(within.stable))}   naive ${pct(mean(within.naive))}   append-only ${within.appendOnly}/${within.count}`);
  console.log(`  after transitions:  stable ${pct(mean(after.stable))}   naive ${pct(mean(after.naive))}   first difference past system+tools+job context ${after.pastJobContext}/${after.count}`);
  console.log(`  ratio after transitions (stable / naive): ${(mean(after.stable) / mean(after.naive)).toFixed(2)}x`);
  const ok = within.appendOnly === within.count && after.pastJobContext === after.count;
  console.log(ok ? '\nOK: append-only within movements; transitions keep system, tools and job context.' : '\nNOT OK');
  return ok ? 0 : 1;
}

process.exitCode = await main();
