// The bubblewrap command line for one sandboxed process. Pure (the host's layout is a parameter), so
// what the sandbox can see is unit-tested line by line: the system directories read-only, the job's
// workspace at its own path, a private /tmp, /proc and /dev, and nothing else of the host.

/** How a top-level system path looks on the host: a directory to bind, a symlink to copy, or absent. */
export type HostEntry = { kind: 'dir' } | { kind: 'symlink'; target: string } | { kind: 'absent' };

/** Read-only system paths. /home, /root, /opt, /srv, /var, /run, /mnt and /media are never shown. */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;

export interface BwrapPlan {
  workspace: string;
  /**
   * The child's fd of the workspace directory, opened and verified by the worker: the bind follows
   * that descriptor, never the path, so a symlink swapped in for the workspace binds nothing else.
   */
  workspaceFd?: number;
  cwd: string;
  readOnlyWorkspace: boolean;
  env: Record<string, string>;
  /** The command, already wrapped in its resource limits. */
  argv: string[];
  /** Host files shown read-only at a path inside (e.g. a resolv.conf for user-mode networking). */
  roFiles?: ReadonlyArray<{ host: string; inside: string }>;
  /** Hold the command until the worker writes to fd 4 (network or cgroup set up first); pid on fd 3. */
  handshake: boolean;
}

export function buildBwrapArgs(plan: BwrapPlan, host: (p: string) => HostEntry): string[] {
  const args = [
    '--unshare-all',
    // Root on the host gets a user namespace too, and no capabilities inside it.
    '--unshare-user',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'maestro-sandbox',
  ];
  for (const p of SYSTEM_PATHS) {
    const entry = host(p);
    if (entry.kind === 'dir') args.push('--ro-bind', p, p);
    else if (entry.kind === 'symlink') args.push('--symlink', entry.target, p);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', '/run', '--tmpfs', '/var');
  for (const f of plan.roFiles ?? []) args.push('--ro-bind', f.host, f.inside);
  if (plan.workspaceFd !== undefined) args.push(plan.readOnlyWorkspace ? '--ro-bind-fd' : '--bind-fd', String(plan.workspaceFd), plan.workspace);
  else args.push(plan.readOnlyWorkspace ? '--ro-bind' : '--bind', plan.workspace, plan.workspace);
  args.push('--chdir', plan.cwd, '--clearenv');
  for (const [k, v] of Object.entries(plan.env)) args.push('--setenv', k, v);
  if (plan.handshake) args.push('--info-fd', '3', '--block-fd', '4');
  args.push('--', ...plan.argv);
  return args;
}

export interface ResourceLimits {
  /** CPU seconds (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Address space in bytes (RLIMIT_AS). */
  memoryBytes: number;
  /** Processes (RLIMIT_NPROC, and a pids cgroup where the worker runs as root). */
  processes: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileBytes: number;
  /** Open files per process (RLIMIT_NOFILE). */
  openFiles: number;
}

/**
 * Wraps argv in util-linux prlimit; hard limits equal soft ones, so the command cannot raise them.
 * CPU is the exception: its hard limit is one second later, so the command first gets SIGXCPU and
 * the model reads "CPU time limit" instead of a bare SIGKILL.
 */
export function withLimits(argv: string[], l: ResourceLimits): string[] {
  return [
    'prlimit',
    `--cpu=${l.cpuSeconds}:${l.cpuSeconds + 1}`,
    `--as=${l.memoryBytes}`,
    `--nproc=${l.processes}`,
    `--fsize=${l.fileBytes}`,
    `--nofile=${l.openFiles}`,
    '--core=0',
    '--',
    ...argv,
  ];
}
