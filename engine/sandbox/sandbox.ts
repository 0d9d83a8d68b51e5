// The one sandbox every process a tool starts runs in (Bash, git, package installs, ripgrep, and the
// later browser and document tools). With MAESTRO_SANDBOX=bwrap (the default) that is bubblewrap:
// new user/PID/IPC/UTS/cgroup/network namespaces, the system read-only, the job's workspace at its own
// path, an allowlisted environment, resource limits, and no network unless granted, and then none of
// the host's loopback. The PID namespace is what makes "every process is gone when the call returns"
// hold: when the command exits, times out or is cancelled, its namespace's init dies and the kernel
// kills whatever is left, background, setsid and double fork included.
import { constants, lstatSync, readlinkSync } from 'node:fs';
import { mkdtemp, open, readlink, rm, writeFile, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildBwrapArgs, withLimits, type HostEntry, type ResourceLimits } from './bwrap-args.js';
import type { CappedOutput } from './capped-output.js';
import { createPidsCgroup } from './pids-cgroup.js';
import { FD, NETWORK_GATE, runProcess } from './process-runner.js';
import { SandboxNetworkRefusedError, SandboxUnavailableError, SandboxWorkspaceError } from './sandbox-errors.js';
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

export { SandboxNetworkRefusedError, SandboxUnavailableError, SandboxWorkspaceError };

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
      // With a network, the command itself waits until slirp4netns is attached: bwrap sets up the
      // namespace's loopback after it reports its pid, and the two must not configure it at once.
      const inner = network === 'outside' ? ['sh', '-c', NETWORK_GATE, 'maestro-sandbox', ...argv] : argv;
      const args = buildBwrapArgs(
        {
          workspace: spec.workspace,
          workspaceFd: FD.workspace,
          cwd,
          readOnlyWorkspace: spec.readOnlyWorkspace ?? false,
          env,
          argv: inner,
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
        handshake: handshake
          ? {
              created: async (pid) => {
                await cgroup?.add(pid);
              },
              ready: network === 'outside' ? async (pid) => (await startUserNet(pid)).stop : undefined,
            }
          : undefined,
      });
    } finally {
      await dir.close();
      await cgroup?.destroy();
      if (tmp) await rm(tmp, { recursive: true, force: true });
    }
  }
}

