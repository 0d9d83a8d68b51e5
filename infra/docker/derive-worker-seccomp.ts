// Derives infra/docker/worker-seccomp.json from Docker's default seccomp profile
// (moby-default-seccomp.json, a copy of moby/profiles seccomp/default.json, Apache-2.0; see
// NOTICE.md). Docker's default blocks what bubblewrap needs to build a sandbox as an unprivileged
// user: clone/unshare with namespace flags, mount, umount2, pivot_root, sethostname, and setns
// (slirp4netns joining the sandbox's network namespace). Everything else stays as upstream has it.
//
//   node --import tsx infra/docker/derive-worker-seccomp.ts     # rewrites worker-seccomp.json
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface SyscallRule {
  names: string[];
  action: string;
  args?: unknown[];
  includes?: Record<string, unknown>;
  excludes?: Record<string, unknown>;
  comment?: string;
  [key: string]: unknown;
}

interface SeccompProfile {
  defaultAction: string;
  syscalls: SyscallRule[];
  [key: string]: unknown;
}

/** Allowed for every process of the worker container (without CAP_SYS_ADMIN, which it does not get). */
export const BWRAP_SYSCALLS = ['clone', 'unshare', 'setns', 'mount', 'umount', 'umount2', 'pivot_root', 'sethostname'] as const;

export function deriveWorkerSeccomp(upstream: SeccompProfile): SeccompProfile {
  // Upstream allows clone only without namespace flags (an argument mask); the rule below allows
  // it outright, so those conditional rules are dropped rather than left to contradict it.
  const syscalls = upstream.syscalls.filter((r) => !(r.names.length === 1 && r.names[0] === 'clone' && r.action === 'SCMP_ACT_ALLOW' && r.args?.length));
  syscalls.push({
    names: [...BWRAP_SYSCALLS],
    action: 'SCMP_ACT_ALLOW',
    comment: 'maestro: bubblewrap sandboxes (user, mount, pid, net namespaces) and slirp4netns, without CAP_SYS_ADMIN',
  });
  return { ...upstream, syscalls };
}

export const UPSTREAM_FILE = fileURLToPath(new URL('./moby-default-seccomp.json', import.meta.url));
export const WORKER_FILE = fileURLToPath(new URL('./worker-seccomp.json', import.meta.url));

export function renderWorkerSeccomp(): string {
  const upstream = JSON.parse(readFileSync(UPSTREAM_FILE, 'utf8')) as SeccompProfile;
  return `${JSON.stringify(deriveWorkerSeccomp(upstream), null, '\t')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(WORKER_FILE, renderWorkerSeccomp());
  console.log(`wrote ${WORKER_FILE}`);
}
