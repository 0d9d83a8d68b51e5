// Host processes by command line. A sandboxed process reports pids of its own PID namespace, so
// tests that check "nothing was left running" look for a unique marker in the host's /proc instead.
import fs from 'node:fs/promises';

export async function hostProcessesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmd = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
    if (cmd.includes(marker)) found.push(Number(pid));
  }
  return found;
}

/** A `sleep` argument no other process on the machine has: a marker for hostProcessesWith. */
export function uniqueSleepSeconds(): string {
  return `${90000 + Math.floor(Math.random() * 9000)}.${Math.floor(Math.random() * 1e6)}`;
}
