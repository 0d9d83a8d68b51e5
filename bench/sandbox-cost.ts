// npm run bench:sandbox — what the tool sandbox costs: the median wall time of one Bash tool call
// through bubblewrap (offline, and with user-mode networking) against the same call unsandboxed
// (MAESTRO_SANDBOX=none), measured in the same run on the same workspace.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { configureSandbox } from '../engine/sandbox/index.js';
import { bashTool } from '../engine/tools/bash.tool.js';
import { executeTool } from '../engine/tools/index.js';
import { prepareWorkspace } from '../engine/tools/workspace.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const COMMAND = 'echo hello > out.txt && cat out.txt';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];

async function main(): Promise<void> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-bench-sandbox-'));
  const workspace = await prepareWorkspace(path.join(base, 'job'));
  const settings = loadConfig().sandbox;
  const variants = [
    { name: 'unsandboxed (MAESTRO_SANDBOX=none)', mode: 'none' as const, network: false },
    { name: 'bwrap, no network', mode: 'bwrap' as const, network: false },
    { name: 'bwrap + slirp4netns (network: true)', mode: 'bwrap' as const, network: true },
  ];
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  // Interleaved, so drift on a shared machine hits every variant alike; one warm-up round first.
  for (let i = -1; i < SAMPLES; i++) {
    for (const v of variants) {
      configureSandbox({ ...settings, mode: v.mode });
      const started = performance.now();
      const out = await executeTool(bashTool, JSON.stringify({ command: COMMAND }), {
        jobId: 'bench',
        workspace,
        signal: new AbortController().signal,
        budgetTokens: 2000,
        sandbox: { network: v.network, env: {} },
      });
      const ms = performance.now() - started;
      if (!/hello/.test(out.content)) throw new Error(`${v.name}: unexpected output ${out.content}`);
      if (i >= 0) times.get(v.name)!.push(ms);
    }
  }
  await fs.rm(base, { recursive: true, force: true });
  const baseline = median(times.get(variants[0].name)!);
  console.log(`One Bash tool call (\`${COMMAND}\`), ${SAMPLES} samples each, interleaved:`);
  for (const v of variants) {
    const t = times.get(v.name)!;
    console.log(`  ${v.name.padEnd(40)} median ${median(t).toFixed(1)} ms  p90 ${p90(t).toFixed(1)} ms  ${(median(t) / baseline).toFixed(2)}x`);
  }
  console.log(`  sandbox overhead (bwrap, no network): +${(median(times.get(variants[1].name)!) - baseline).toFixed(1)} ms per call`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
