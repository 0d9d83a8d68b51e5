// Installs a package a person approved (RequestPackage). npm and pip install into the workspace
// inside the job's sandbox, which gets the network for that install only; install scripts are off
// (npm --ignore-scripts, pip wheels only) and the registry is the worker's configuration, never a
// file in the workspace (a planted .npmrc is hidden, pip reads no config and runs isolated). apt
// installs system-wide, so it cannot run in the sandbox: it is off unless the operator allows it
// (MAESTRO_ALLOW_APT_INSTALL) on a root worker. The name and version come from the model: strict
// patterns, passed as argv, never a shell, so a leading "-" can never become an option.
import path from 'node:path';
import { loadConfig } from '../config/config.js';
import { getSandbox, Sandbox, SandboxUnavailableError } from './sandbox/index.js';

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

/** Where installs come from and whether apt is allowed: the operator's configuration. */
export interface PackageSources {
  npmRegistry: string;
  pipIndexUrl: string;
  allowApt: boolean;
}

export const DEFAULT_PACKAGE_SOURCES: PackageSources = {
  npmRegistry: 'https://registry.npmjs.org/',
  pipIndexUrl: 'https://pypi.org/simple',
  allowApt: false,
};

let configured: PackageSources | undefined;

/** The worker's sources, set once at worker start (tests and the CLI default to the environment). */
export function configurePackageSources(sources: PackageSources): void {
  configured = sources;
}

function currentSources(): PackageSources {
  configured ??= loadConfig().packages;
  return configured;
}

/** A file:// index (an operator's local mirror) is shown read-only inside the sandbox. */
function localIndexDir(url: string): string | undefined {
  return url.startsWith('file://') ? new URL(url).pathname : undefined;
}

/** Why this worker cannot install with that manager at all, or null. */
export function installRefusal(
  manager: PackageManager,
  uid: number | undefined = process.getuid?.(),
  sources: PackageSources = currentSources(),
): string | null {
  if (manager === 'apt' && !sources.allowApt) {
    return 'apt installs are turned off on this worker (they change the system outside the sandbox). Use npm or pip (installed into the workspace), or ask the operator to add the package to the worker image.';
  }
  if (manager === 'apt' && uid !== 0) {
    return 'apt packages can only be installed where the worker runs as root, and this worker does not. Use npm or pip (installed into the workspace), or ask the operator to add the package to the worker image.';
  }
  return null;
}

export interface InstallCommand {
  file: string;
  args: string[];
  env?: Record<string, string>;
  /** npm and pip run in the job's sandbox with the network; apt cannot (it installs system-wide). */
  sandboxed: boolean;
  /** What the log and the model are shown as the command line (default: file and args). */
  display?: string;
  /** Host directories the install may read (a local index the operator configured). */
  readOnlyPaths?: string[];
}

/**
 * npm installs into a private scratch prefix and only the result is copied into the workspace: with
 * the workspace as its prefix, npm would read the workspace's package.json (dependencies the person
 * never approved, git URLs that run git with a planted config) and its .npmrc.
 */
const NPM_SCRATCH = '/tmp/maestro-npm';
const NPM_SCRIPT =
  'set -e; spec=$1; ws=$2; shift 2; mkdir -p "$0"; npm install --prefix "$0" "$@" "$spec"; ' +
  'mkdir -p "$ws/node_modules"; cp -a "$0/node_modules/." "$ws/node_modules/"';
/** No config of the workspace's: HOME is the sandbox's private /tmp, and git is never run. */
const NPM_ENV = { HOME: '/tmp', XDG_CONFIG_HOME: '/tmp/.config', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

export function installCommand(spec: PackageSpec, workspaceRoot: string, sources: PackageSources = DEFAULT_PACKAGE_SOURCES): InstallCommand {
  const { name, version } = spec;
  switch (spec.manager) {
    case 'npm':
      return {
        file: 'sh',
        args: [
          '-c',
          NPM_SCRIPT,
          NPM_SCRATCH,
          version ? `${name}@${version}` : name,
          workspaceRoot,
          '--no-audit',
          '--no-fund',
          '--no-save',
          '--ignore-scripts',
          '--git=/bin/false',
          `--registry=${sources.npmRegistry}`,
          '--userconfig=/dev/null',
          // npm refuses one file for both; the sandbox's /tmp is private and empty.
          '--globalconfig=/tmp/maestro-no-global-npmrc',
          '--cache=/tmp/npm-cache',
          // A person waits on this install: retry a flaky registry, but not for minutes.
          '--fetch-retries=2',
          '--fetch-retry-mintimeout=2000',
          '--fetch-retry-maxtimeout=10000',
        ],
        env: NPM_ENV,
        sandboxed: true,
        display: `npm install ${version ? `${name}@${version}` : name} --ignore-scripts --registry=${sources.npmRegistry} (into node_modules/)`,
      };
    case 'pip':
      return {
        file: 'python3',
        // -I: isolated, so a pip/ or pip.py planted in the workspace cannot stand in for pip itself.
        args: [
          '-I',
          '-m',
          'pip',
          'install',
          '--isolated',
          '--disable-pip-version-check',
          '--no-input',
          '--no-cache-dir',
          '--only-binary=:all:',
          '--index-url',
          sources.pipIndexUrl,
          '--target',
          path.join(workspaceRoot, PIP_TARGET),
          version ? `${name}==${version}` : name,
        ],
        env: { PIP_CONFIG_FILE: '/dev/null', HOME: '/tmp' },
        sandboxed: true,
        readOnlyPaths: [localIndexDir(sources.pipIndexUrl)].filter((d): d is string => d !== undefined),
      };
    case 'apt':
      return { file: 'apt-get', args: ['install', '-y', version ? `${name}=${version}` : name], env: { DEBIAN_FRONTEND: 'noninteractive' }, sandboxed: false };
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
  sources?: PackageSources;
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
  const sources = opts.sources ?? currentSources();
  const refused = installRefusal(spec.manager, opts.uid, sources);
  if (refused) return { ok: false, command: '', log: refused };
  const cmd = installCommand(spec, opts.workspaceRoot, sources);
  const command = cmd.display ?? [cmd.file, ...cmd.args].join(' ');
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

/**
 * Runs an install command: in the job's sandbox with the network for this install only, or (apt)
 * on the host under the same allowlisted environment and limits, never through a shell.
 */
export const runCommand: CommandRunner = async (cmd, opts) => {
  const sandbox = cmd.sandboxed ? getSandbox() : new Sandbox({ ...getSandbox().settings, mode: 'none' });
  try {
    const r = await sandbox.run({
      argv: [cmd.file, ...cmd.args],
      workspace: opts.cwd,
      cwd: cmd.sandboxed ? '/tmp' : opts.cwd,
      env: cmd.env,
      network: cmd.sandboxed ? 'outside' : 'none',
      readOnlyPaths: cmd.readOnlyPaths,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      outputCapBytes: INSTALL_LOG_CHARS * 4,
      mergeStderr: true,
    });
    return { code: r.code, output: r.stdout.text(), stoppedBy: r.stoppedBy === 'output' ? null : r.stoppedBy };
  } catch (err) {
    if (err instanceof SandboxUnavailableError) return { code: null, output: '', stoppedBy: null, spawnError: err.message };
    throw err;
  }
};
