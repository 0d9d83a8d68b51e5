// The test runner behind `npm test [unit|integration] [files...]`. Integration tests share ONE
// Temporal dev server started here (in-memory, free ports) unless TEMPORAL_ADDRESS is set already.
// Output: node's spec reporter on stdout, TAP in <MAESTRO_HOME>/test-results.tap, and the TAP
// closing summary (`# pass N`, `# fail N`, ...) echoed to stdout at the end, which CI reads.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadConfig } from '../config/config.js';
import { ensureTemporalCli } from '../infra/temporal-cli.js';
import { startTemporalDevServer, type TemporalDevServer } from '../infra/temporal-dev-server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SUITES = {
  unit: path.join(root, 'test', 'unit'),
  integration: path.join(root, 'test', 'integration'),
  security: path.join(root, 'test', 'security'),
};
type Suite = keyof typeof SUITES;

async function collect(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name))
    .sort();
}

/** `[unit|integration] [file.test.ts ...]`: a suite name, explicit files, or nothing (everything). */
async function selectFiles(args: string[]): Promise<string[]> {
  const suites = args.filter((a): a is Suite => a in SUITES);
  const explicit = args.filter((a) => !(a in SUITES)).map((a) => path.resolve(a));
  const missing = explicit.filter((f) => !existsSync(f));
  if (missing.length > 0) throw new Error(`no such test file: ${missing.join(', ')}`);
  const chosen = suites.length === 0 && explicit.length === 0 ? (Object.keys(SUITES) as Suite[]) : suites;
  const files = [...explicit];
  for (const s of chosen) files.push(...(await collect(SUITES[s])));
  return [...new Set(files)];
}

async function runSetupHook(env: NodeJS.ProcessEnv): Promise<void> {
  // Optional: scripts/test-setup.ts may export setup(env), e.g. to pre-bundle workflow code once.
  const hook = path.join(root, 'scripts', 'test-setup.ts');
  if (!existsSync(hook)) return;
  const mod = (await import(pathToFileURL(hook).href)) as { setup?: (env: NodeJS.ProcessEnv) => unknown };
  await mod.setup?.(env);
}

/** The TAP file's closing summary lines (`# tests`, `# pass`, `# fail`, ...). */
async function tapSummary(tapFile: string): Promise<string> {
  const text = await fs.readFile(tapFile, 'utf8').catch(() => '');
  const lines = text.trimEnd().split('\n');
  const summary: string[] = [];
  for (let i = lines.length - 1; i >= 0 && /^# \w+ \S+$/.test(lines[i]); i--) summary.unshift(lines[i]);
  return summary.join('\n');
}

async function main(): Promise<number> {
  const files = await selectFiles(process.argv.slice(2));
  if (files.length === 0) {
    console.log('no test files found');
    return 1;
  }
  const config = loadConfig();
  const env: NodeJS.ProcessEnv = { ...process.env };
  let server: TemporalDevServer | undefined;
  // Security tests play hostile models against real jobs, so they need the dev server too.
  const needsTemporal = files.some((f) => f.startsWith(SUITES.integration + path.sep) || f.startsWith(SUITES.security + path.sep));
  let child: ReturnType<typeof spawn> | undefined;
  const forward = (sig: NodeJS.Signals) => {
    if (child && child.exitCode === null) child.kill(sig);
    else process.exit(130);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  try {
    if (needsTemporal && !env.TEMPORAL_ADDRESS) {
      const cliPath = await ensureTemporalCli(config.home);
      const started = Date.now();
      server = await startTemporalDevServer({
        cliPath,
        port: 0,
        headless: true,
        namespace: config.temporal.namespace,
        logFile: path.join(config.home, 'logs', 'temporal-test.log'),
      });
      console.log(`temporal dev server for the tests at ${server.address} (pid ${server.pid}, ${Date.now() - started} ms)`);
      env.TEMPORAL_ADDRESS = server.address;
    }
    await runSetupHook(env);
    // A TAP file of our own: two runs at once (several people, one tree) must not mix summaries.
    const tapFile = path.join(config.home, 'test-results.tap');
    const runTap = path.join(config.home, `test-results.${process.pid}.tap`);
    await fs.mkdir(config.home, { recursive: true });
    const args = [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=1',
      '--test-timeout=300000',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${runTap}`,
      ...files.map((f) => path.relative(root, f)),
    ];
    const code = await new Promise<number>((resolve, reject) => {
      child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
      child.once('error', reject);
      child.once('exit', (c, sig) => resolve(c ?? 128 + (sig ? (os.constants.signals[sig] ?? 0) : 0)));
    });
    const summary = await tapSummary(runTap);
    await fs.rename(runTap, tapFile).catch(() => undefined);
    if (summary) console.log(`\n${summary}`);
    else console.log(`\n# no TAP summary found (test runner exit code ${code})`);
    return code;
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
    await server?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
