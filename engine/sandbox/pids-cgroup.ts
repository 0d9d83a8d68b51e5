// A process-count limit that holds for root too. RLIMIT_NPROC does not bind uid 0 (the kernel exempts
// it), so a worker running as root puts each sandbox in a pids cgroup of its own where it can make
// one (cgroup v2 under the worker's cgroup, or the v1 pids hierarchy). Elsewhere prlimit's NPROC does.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface PidsCgroup {
  /** Moves a process (and so every process it starts later) into the cgroup. */
  add(pid: number): Promise<void>;
  /** Kills every process still in it and removes it. */
  destroy(): Promise<void>;
}

let parentDir: string | null | undefined;

function findParent(): string | null {
  if (process.getuid?.() !== 0) return null;
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return null;
  }
  for (const line of lines) {
    const [, controllers, rel] = line.split(':');
    if (controllers === 'pids' && existsSync('/sys/fs/cgroup/pids')) return path.join('/sys/fs/cgroup/pids', rel ?? '/');
  }
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    const dir = path.join('/sys/fs/cgroup', v2.slice(3));
    try {
      if (readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').includes('pids')) return dir;
    } catch {
      return null;
    }
  }
  return null;
}

/** A fresh cgroup limited to `max` processes, or null where this worker cannot make one. */
export async function createPidsCgroup(max: number): Promise<PidsCgroup | null> {
  if (parentDir === undefined) parentDir = findParent();
  if (parentDir === null) return null;
  const dir = path.join(parentDir, `maestro-sandbox-${randomUUID()}`);
  try {
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'pids.max'), String(max));
  } catch {
    await fs.rmdir(dir).catch(() => undefined);
    parentDir = null; // not writable here: stop trying
    return null;
  }
  return {
    add: (pid) => fs.writeFile(path.join(dir, 'cgroup.procs'), String(pid)),
    async destroy() {
      for (let round = 0; round < 50; round++) {
        const pids = (await fs.readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map(Number);
        if (pids.length === 0) break;
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      await fs.rmdir(dir).catch(() => undefined);
    },
  };
}
