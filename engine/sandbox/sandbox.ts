// The one sandbox every process a tool starts runs in (Bash, git, package installs, ripgrep, and the
// later browser and document tools). With MAESTRO_SANDBOX=bwrap (the default) that is bubblewrap:
// new user/PID/IPC/UTS/cgroup/network namespaces, the system read-only, the job's workspace at its own
// path, an allowlisted environment, resource limits, and no network unless granted, and then none of
// the host's loopback. The PID namespace is what makes "every process is gone when the call returns"
// hold: when the command exits, times out or is cancelled, its namespace's init dies and the kernel
// kills whatever is left, background, setsid and double fork included.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, lstatSync, readlinkSync } from 'node:fs';
import { mkdtemp, open, readlink, rm, writeFile, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildBwrapArgs, withLimits, type HostEntry, type ResourceLimits } from './bwrap-args.js';
import { CappedOutput } from './capped-output.js';
import { createPidsCgroup, type PidsCgroup } from './pids-cgroup.js';
import { buildSandboxEnv, SANDBOX_PATH } from './sandbox-env.js';
import { probeBwrap } from './sandbox-probe.js';
import { SLIRP_DNS, startUserNet } from './user-net.js';

export type SandboxMode = 'bwrap' | 'none';

export interface SandboxSettings {
  mode: SandboxMode;
  /** false: a piece's `network: true` is refused (the operator keeps every sandbox offline). */
  allowNetwork: boolean;
  limits: ResourceLimits;
  /** Worker variables passed in by name (operator's choice; Maestro's own are never passed). */
  passThroughEnv: readonly string[];
  /** The bubblewrap executable (default: bwrap from PATH). */
  bwrapBinary?: string;
}

export interface SandboxRunSpec {
  /** argv[0] is looked up on the sandbox's PATH. */
  argv: string[];
  /** The job workspace (a real path): the only host directory the process sees besides the system. */
  workspace: string;
  /** Absolute, inside the workspace; default the workspace. */
  cwd?: string;
  readOnlyWorkspace?: boolean;
  /** Added after the allowlist (piece-declared values, tool settings). */
  env?: Record<string, string>;
  /** 'outside': user-mode networking without the host's loopback. Default none. */
  network?: 'none' | 'outside';
  timeoutMs: number;
  signal?: AbortSignal;
  stdin?: string | Buffer;
  /** Bytes kept of each stream, head and tail. */
  outputCapBytes: number;
  /** Bash: stderr goes into the stdout buffer, in order. */
  mergeStderr?: boolean;
  /** Each stdout chunk; returning false stops the process (e.g. enough search results). */
  onStdout?: (chunk: Buffer) => boolean | void;
  /** Host paths shown read-only at the same path (operator-configured only, e.g. a local package index). */
  readOnlyPaths?: readonly string[];
  /** Overrides the settings' limits for this run. */
  limits?: Partial<ResourceLimits>;
}

export interface SandboxResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBy: 'timeout' | 'abort' | 'output' | null;
  stdout: CappedOutput;
  stderr: CappedOutput;
  durationMs: number;
}

export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

export class SandboxNetworkRefusedError extends Error {
  override name = 'SandboxNetworkRefusedError';
}

/** The workspace path no longer leads to the workspace (a symlink was swapped in for it). */
export class SandboxWorkspaceError extends Error {
  override name = 'SandboxWorkspaceError';
}

/** Where the workspace's descriptor sits in bwrap's fd table (3 and 4 are the start handshake). */
const WORKSPACE_FD = 5;

/** Opens the workspace without following a final symlink and checks the kernel agrees where it is. */
async function openWorkspace(workspace: string): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await open(workspace, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new SandboxWorkspaceError(`the job workspace ${workspace} cannot be opened as a directory: ${(err as Error).message}`, { cause: err });
  }
  const real = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => '');
  if (real !== workspace) {
    await fh.close();
    throw new SandboxWorkspaceError(`the job workspace ${workspace} now leads to ${real || 'somewhere else'}; refusing to run anything there`);
  }
  return fh;
}

/** After the main process exits, how long stray pipe holders may keep output open ('none' mode). */
const PIPE_GRACE_MS = 500;

function hostEntry(p: string): HostEntry {
  try {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return { kind: 'symlink', target: readlinkSync(p) };
    return st.isDirectory() ? { kind: 'dir' } : { kind: 'absent' };
  } catch {
    return { kind: 'absent' };
  }
}

export class Sandbox {
  constructor(readonly settings: SandboxSettings) {}

  /** Why this sandbox cannot run processes here (with how to fix it), or null when it can. */
  async unavailableReason(): Promise<string | null> {
    return this.settings.mode === 'none' ? null : probeBwrap(this.settings.bwrapBinary);
  }

  async run(spec: SandboxRunSpec): Promise<SandboxResult> {
    const network = spec.network ?? 'none';
    if (network === 'outside' && !this.settings.allowNetwork) {
      throw new SandboxNetworkRefusedError('the operator has turned sandbox network access off (MAESTRO_SANDBOX_NETWORK=deny)');
    }
    const limits = { ...this.settings.limits, ...spec.limits };
    const env = buildSandboxEnv({ home: spec.workspace, passThrough: this.settings.passThroughEnv, extra: spec.env });
    const argv = withLimits(spec.argv, limits);
    const cwd = spec.cwd ?? spec.workspace;
    if (this.settings.mode === 'none') return runProcess(argv[0], argv.slice(1), { ...spec, cwd, env, detached: true });

    const bwrap = this.settings.bwrapBinary ?? 'bwrap';
    const why = await probeBwrap(bwrap);
    if (why) throw new SandboxUnavailableError(why);
    const dir = await openWorkspace(spec.workspace);
    const cgroup = await createPidsCgroup(limits.processes).catch(async (err: unknown) => {
      await dir.close();
      throw err;
    });
    let tmp: string | undefined;
    try {
      const roFiles = (spec.readOnlyPaths ?? []).map((p) => ({ host: p, inside: p }));
      if (network === 'outside') {
        tmp = await mkdtemp(path.join(os.tmpdir(), 'maestro-net-'));
        await writeFile(path.join(tmp, 'resolv.conf'), `nameserver ${SLIRP_DNS}\n`);
        roFiles.push({ host: path.join(tmp, 'resolv.conf'), inside: '/etc/resolv.conf' });
      }
      const handshake = cgroup !== null || network === 'outside';
      const args = buildBwrapArgs(
        {
          workspace: spec.workspace,
          workspaceFd: WORKSPACE_FD,
          cwd,
          readOnlyWorkspace: spec.readOnlyWorkspace ?? false,
          env,
          argv,
          roFiles,
          handshake,
        },
        hostEntry,
      );
      return await runProcess(bwrap, args, {
        ...spec,
        cwd: '/',
        env: { PATH: SANDBOX_PATH },
        detached: false,
        workspaceFd: dir.fd,
        handshake: handshake ? (pid) => prepare(pid, cgroup, network) : undefined,
      });
    } finally {
      await dir.close();
      await cgroup?.destroy();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    }
  }
}

/** Runs between the sandbox's creation and its command's start: limits and network first. */
async function prepare(pid: number, cgroup: PidsCgroup | null, network: 'none' | 'outside'): Promise<() => void> {
  await cgroup?.add(pid);
  if (network !== 'outside') return () => undefined;
  const net = await startUserNet(pid);
  return net.stop;
}

interface ProcessOptions extends SandboxRunSpec {
  cwd: string;
  env: Record<string, string>;
  detached: boolean;
  /** Passed to the child at WORKSPACE_FD (bwrap binds it). */
  workspaceFd?: number;
  /** With the bwrap handshake: called with the sandbox's pid before its command may start. */
  handshake?: (pid: number) => Promise<() => void>;
}

function runProcess(file: string, args: string[], o: ProcessOptions): Promise<SandboxResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const stdout = new CappedOutput(o.outputCapBytes);
    const stderr = o.mergeStderr ? stdout : new CappedOutput(o.outputCapBytes);
    const stdio: Array<'pipe' | 'ignore' | number> = [o.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'];
    if (o.handshake || o.workspaceFd !== undefined) stdio.push(o.handshake ? 'pipe' : 'ignore', o.handshake ? 'pipe' : 'ignore');
    if (o.workspaceFd !== undefined) stdio.push(o.workspaceFd);
    const child: ChildProcess = spawn(file, args, { cwd: o.cwd, env: o.env, detached: o.detached, stdio });
    let stoppedBy: SandboxResult['stoppedBy'] = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    let cleanup: () => void = () => undefined;
    const kill = () => {
      try {
        // bwrap: SIGKILL to bwrap takes its PID namespace down with it (--die-with-parent).
        // none: the process group is as far as an unsandboxed kill reaches.
        if (child.pid !== undefined) process.kill(o.detached ? -child.pid : child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const stop = (why: NonNullable<SandboxResult['stoppedBy']>) => {
      if (stoppedBy !== null || exit !== null) return;
      stoppedBy = why;
      kill();
    };
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (o.detached) kill(); // 'none': whatever the command left in its group goes too
      cleanup();
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (err) reject(err);
      else resolve({ code: exit?.code ?? null, signal: exit?.signal ?? null, stoppedBy, stdout, stderr, durationMs: Date.now() - started });
    };
    child.stdout?.on('data', (c: Buffer) => {
      stdout.push(c);
      if (o.onStdout?.(c) === false) stop('output');
    });
    child.stderr?.on('data', (c: Buffer) => stderr.push(c));
    child.once('error', (err) => finish(new SandboxUnavailableError(`cannot start ${file}: ${err.message}`, { cause: err })));
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      setTimeout(() => finish(), PIPE_GRACE_MS).unref();
    });
    child.once('close', () => finish());
    const timer = setTimeout(() => stop('timeout'), o.timeoutMs);
    const onAbort = () => stop('abort');
    if (o.signal?.aborted) stop('abort');
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.stdin !== undefined) child.stdin?.end(o.stdin);
    if (o.handshake) {
      handshake(child, o.handshake).then(
        (c) => {
          cleanup = c;
          if (settled) c();
        },
        (err: Error) => {
          kill();
          // Stopped while it was being set up: an ordinary timeout or cancel, not a broken sandbox.
          finish(stoppedBy === null ? err : undefined);
        },
      );
    }
  });
}

/** Reads the sandbox's pid from bwrap's info fd, prepares, then lets the command start. */
async function handshake(child: ChildProcess, prepareFn: (pid: number) => Promise<() => void>): Promise<() => void> {
  const info = child.stdio[3] as NodeJS.ReadableStream;
  const block = child.stdio[4] as NodeJS.WritableStream;
  const pid = await new Promise<number>((resolve, reject) => {
    let text = '';
    info.on('data', (b: Buffer) => {
      text += b.toString('utf8');
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    info.once('end', () => reject(new SandboxUnavailableError(`bwrap ended before the sandbox started: ${text.slice(0, 200)}`)));
  });
  const cleanup = await prepareFn(pid);
  block.write('1');
  return cleanup;
}
