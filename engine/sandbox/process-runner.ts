// Runs one process (bwrap, or the command itself with MAESTRO_SANDBOX=none) to its end: output kept
// within bounds, a timeout and a cancel that kill it, and for bwrap the start handshake: the sandbox
// is created, put in its cgroup, then (network only) its command waits until slirp4netns is up.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { CappedOutput } from './capped-output.js';
import type { SandboxResult, SandboxRunSpec } from './sandbox.js';
import { SandboxUnavailableError } from './sandbox-errors.js';

/** After the main process exits, how long stray pipe holders may keep output open ('none' mode). */
const PIPE_GRACE_MS = 500;

/**
 * The child's descriptors: 3 bwrap's info (the sandbox's pid), 4 bwrap's block (start), 5 the
 * workspace directory, 6 "set up" from inside the sandbox and 7 "go" back (network only).
 */
export const FD = { info: 3, block: 4, workspace: 5, ready: 6, go: 7 } as const;

/** Runs inside the sandbox before the command when a network must be attached first. */
export const NETWORK_GATE = `echo >&${FD.ready}; read _ <&${FD.go}; exec "$@" ${FD.ready}>&- ${FD.go}<&-`;

export interface Handshake {
  /** The sandbox exists (its pid on the host) and its command has not started. */
  created(pid: number): Promise<void>;
  /** bwrap's own setup is done and the command waits at NETWORK_GATE; returns a cleanup. */
  ready?(pid: number): Promise<() => void>;
}

export interface ProcessOptions extends SandboxRunSpec {
  cwd: string;
  env: Record<string, string>;
  detached: boolean;
  /** Passed to the child at FD.workspace (bwrap binds it). */
  workspaceFd?: number;
  handshake?: Handshake;
}

export function runProcess(file: string, args: string[], o: ProcessOptions): Promise<SandboxResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const stdout = new CappedOutput(o.outputCapBytes);
    const stderr = o.mergeStderr ? stdout : new CappedOutput(o.outputCapBytes);
    const stdio: Array<'pipe' | 'ignore' | number> = [o.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'];
    if (o.handshake || o.workspaceFd !== undefined) {
      const hs = o.handshake ? 'pipe' : 'ignore';
      stdio.push(hs, hs, o.workspaceFd ?? 'ignore');
      if (o.handshake?.ready) stdio.push('pipe', 'pipe');
    }
    const child: ChildProcess = spawn(file, args, { cwd: o.cwd, env: o.env, detached: o.detached, stdio });
    // A sandboxed command inherits the far ends of these pipes: whatever it does with them must not
    // take the worker down (an 'error' with no listener would).
    for (const s of child.stdio.slice(3)) (s as Readable | null)?.on('error', () => undefined);
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
      for (const s of child.stdio) (s as Readable | Writable | null)?.destroy();
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
      runHandshake(child, o.handshake).then(
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

/** What the stream delivers until `until` holds; later bytes are dropped. */
function firstMessage(stream: Readable, until: (text: string) => boolean, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (b: Buffer) => {
      text += b.toString('utf8');
      if (until(text)) {
        // Kept open (bwrap may write more, and a closed end would SIGPIPE it) but discarded:
        // nothing the command writes there later fills the worker's memory.
        stream.off('data', onData);
        stream.on('data', () => undefined);
        resolve(text);
      } else if (text.length > 4096) reject(new SandboxUnavailableError(`unexpected output on the ${what} pipe`));
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new SandboxUnavailableError(`bwrap ended before the sandbox ${what}: ${text.slice(0, 200)}`)));
  });
}

async function runHandshake(child: ChildProcess, hs: Handshake): Promise<() => void> {
  // The tuple type stops at fd 4; the runtime array has every fd asked for.
  const fds = child.stdio as unknown as Array<Readable & Writable>;
  const info = await firstMessage(fds[FD.info], (t) => /"child-pid"\s*:\s*\d+/.test(t), 'started');
  const pid = Number(/"child-pid"\s*:\s*(\d+)/.exec(info)![1]);
  await hs.created(pid);
  fds[FD.block].end('1');
  if (!hs.ready) return () => undefined;
  await firstMessage(fds[FD.ready], (t) => t.includes('\n'), 'was set up');
  const cleanup = await hs.ready(pid);
  fds[FD.go].end('go\n');
  return cleanup;
}
