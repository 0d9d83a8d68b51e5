// Installs a package a person approved (RequestPackage) into the job's workspace: npm and pip into
// the workspace, apt system-wide only where the worker runs as root. The name and version come from
// the model, so they are checked against strict patterns and passed as argv (execFile-style, never a
// shell); a leading "-" can therefore never become an option.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { toolEnv } from './tools/bash.tool.js';

export const PACKAGE_MANAGERS = ['npm', 'pip', 'apt'] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];

export interface PackageSpec {
  manager: PackageManager;
  name: string;
  version?: string;
}

/** Where pip puts packages, relative to the workspace root (add it to PYTHONPATH). */
export const PIP_TARGET = path.join('.packages', 'python');
export const DEFAULT_INSTALL_TIMEOUT_MS = 10 * 60_000;
/** How much of the install log is kept (its tail: errors come last). */
export const INSTALL_LOG_CHARS = 4000;

// npm: optional @scope/, lowercase URL-safe name. pip: PEP 508 names. apt: Debian policy names.
const NAME_RE: Record<PackageManager, RegExp> = {
  npm: /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/,
  pip: /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/,
  apt: /^[a-z0-9][a-z0-9+.-]+$/,
};
// Exact versions (npm may also name a range prefix or a dist-tag); apt versions may carry an epoch.
const VERSION_RE: Record<PackageManager, RegExp> = {
  npm: /^[~^]?[0-9A-Za-z][0-9A-Za-z.+_-]*$/,
  pip: /^[0-9A-Za-z][0-9A-Za-z.+_!-]*$/,
  apt: /^[0-9A-Za-z][0-9A-Za-z.+~:-]*$/,
};

/** Why the spec cannot be installed as given, or null when it is well-formed. */
export function validatePackageSpec(spec: PackageSpec): string | null {
  if (!PACKAGE_MANAGERS.includes(spec.manager)) return `manager must be one of ${PACKAGE_MANAGERS.join(', ')}`;
  if (spec.name.length > 214 || !NAME_RE[spec.manager].test(spec.name)) {
    return `"${spec.name}" is not a valid ${spec.manager} package name (letters, digits and . _ - only; no spaces, options or shell characters)`;
  }
  if (spec.version !== undefined && (spec.version.length > 100 || !VERSION_RE[spec.manager].test(spec.version))) {
    return `"${spec.version}" is not a valid ${spec.manager} version (e.g. 1.2.3)`;
  }
  return null;
}

/** Why this worker cannot install with that manager at all, or null. */
export function installRefusal(manager: PackageManager, uid: number | undefined = process.getuid?.()): string | null {
  if (manager === 'apt' && uid !== 0) {
    return 'apt packages can only be installed where the worker runs as root, and this worker does not. Use npm or pip (installed into the workspace), or ask the operator to add the package to the worker image.';
  }
  return null;
}

export interface InstallCommand {
  file: string;
  args: string[];
  env?: Record<string, string>;
}

export function installCommand(spec: PackageSpec, workspaceRoot: string): InstallCommand {
  const { name, version } = spec;
  switch (spec.manager) {
    case 'npm':
      return { file: 'npm', args: ['install', '--prefix', workspaceRoot, '--no-audit', '--no-fund', version ? `${name}@${version}` : name] };
    case 'pip':
      return {
        file: 'python3',
        args: ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--target', path.join(workspaceRoot, PIP_TARGET), version ? `${name}==${version}` : name],
      };
    case 'apt':
      return { file: 'apt-get', args: ['install', '-y', version ? `${name}=${version}` : name], env: { DEBIAN_FRONTEND: 'noninteractive' } };
  }
}

export interface CommandRun {
  code: number | null;
  output: string;
  stoppedBy: 'timeout' | 'abort' | null;
  /** The command could not start (not installed). */
  spawnError?: string;
}

/** Runs one command and collects stdout+stderr; injectable so tests need not install anything. */
export type CommandRunner = (cmd: InstallCommand, opts: { cwd: string; signal?: AbortSignal; timeoutMs: number }) => Promise<CommandRun>;

export interface InstallOptions {
  workspaceRoot: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The worker's uid (default process.getuid()); tests inject a non-root one. */
  uid?: number;
  run?: CommandRunner;
}

export interface InstallResult {
  ok: boolean;
  /** The command line as run, for the log and the model. */
  command: string;
  /** The tail of the command's output, or why it did not run. */
  log: string;
  /** How to use what was installed (pip: PYTHONPATH). */
  usage?: string;
}

export async function installPackage(spec: PackageSpec, opts: InstallOptions): Promise<InstallResult> {
  const invalid = validatePackageSpec(spec);
  if (invalid) return { ok: false, command: '', log: invalid };
  const refused = installRefusal(spec.manager, opts.uid);
  if (refused) return { ok: false, command: '', log: refused };
  const cmd = installCommand(spec, opts.workspaceRoot);
  const command = [cmd.file, ...cmd.args].join(' ');
  const run = opts.run ?? runCommand;
  const res = await run(cmd, { cwd: opts.workspaceRoot, signal: opts.signal, timeoutMs: opts.timeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS });
  const output = res.output.trimEnd();
  const tail = output.length > INSTALL_LOG_CHARS ? `[...]\n${output.slice(-INSTALL_LOG_CHARS)}` : output;
  if (res.spawnError) return { ok: false, command, log: `could not run ${cmd.file}: ${res.spawnError}` };
  if (res.stoppedBy) return { ok: false, command, log: `${tail}\n[stopped: ${res.stoppedBy === 'timeout' ? 'timed out' : 'cancelled'}]`.trim() };
  if (res.code !== 0) return { ok: false, command, log: `${tail}\n[exit code ${res.code}]`.trim() };
  return { ok: true, command, log: tail.trim(), usage: usageOf(spec) };
}

function usageOf(spec: PackageSpec): string {
  switch (spec.manager) {
    case 'npm':
      return `It is in node_modules/ at the workspace root: require/import "${spec.name}" from code in the workspace.`;
    case 'pip':
      return `It is in ${PIP_TARGET}/ in the workspace: run Python with PYTHONPATH=${PIP_TARGET} (e.g. \`PYTHONPATH=${PIP_TARGET} python3 script.py\`).`;
    case 'apt':
      return 'It is installed system-wide on this worker.';
  }
}

/** Spawns without a shell; stops the process on abort or timeout. */
export const runCommand: CommandRunner = (cmd, opts) =>
  new Promise((resolve) => {
    const chunks: string[] = [];
    let size = 0;
    let stoppedBy: CommandRun['stoppedBy'] = null;
    const child = spawn(cmd.file, cmd.args, {
      cwd: opts.cwd,
      env: { ...toolEnv(), ...cmd.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (b: Buffer) => {
      chunks.push(b.toString('utf8'));
      size += b.length;
      // Only the tail is kept; drop old chunks once well past the limit.
      while (size > INSTALL_LOG_CHARS * 4 && chunks.length > 1) size -= chunks.shift()!.length;
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const stop = (why: 'timeout' | 'abort') => {
      if (child.exitCode !== null || stoppedBy) return;
      stoppedBy = why;
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 2000).unref();
    };
    const timer = setTimeout(() => stop('timeout'), opts.timeoutMs);
    const onAbort = () => stop('abort');
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (r: Omit<CommandRun, 'output' | 'stoppedBy'>) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve({ ...r, output: chunks.join(''), stoppedBy });
    };
    child.on('error', (err) => done({ code: null, spawnError: err.message }));
    child.on('close', (code) => done({ code }));
  });
