// Bash runs with cwd = the workspace root and a scrubbed environment. That is the whole of its
// confinement: it is NOT a sandbox (the command may cd anywhere or read absolute paths). Isolation,
// where needed, comes from how the worker is deployed (container, user), not from this tool.
import path from 'node:path';
import { spawn } from 'node:child_process';
import { z } from 'zod';
import { defineTool, type ToolOutput } from './tool.js';
import { budgetChars, CHARS_PER_TOKEN, truncateText } from './truncate.js';

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const MAX_BASH_TIMEOUT_MS = 600_000;
/** Maestro's own secrets: a command the model writes must never see them. */
export const SECRET_ENV_VARS: readonly string[] = ['MAESTRO_LLM_API_KEY', 'MAESTRO_API_TOKEN', 'DATABASE_URL'];
/** After SIGTERM, how long the process group gets before SIGKILL. */
const KILL_GRACE_MS = 1_000;
/** After bash exits, how long background children may keep its pipes open before we stop reading. */
const PIPE_GRACE_MS = 500;

const schema = z.object({
  command: z.string().min(1).describe('Shell command, run with bash -c in the workspace root directory.'),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(MAX_BASH_TIMEOUT_MS)
    .optional()
    .describe(`Kill the command after this many milliseconds (default ${DEFAULT_BASH_TIMEOUT_MS}, max ${MAX_BASH_TIMEOUT_MS}).`),
});

export function toolEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const key of SECRET_ENV_VARS) delete out[key];
  return out;
}

/** Keeps the first and last `cap` bytes of a stream of chunks, counting what falls between. */
class HeadTailBuffer {
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  total = 0;
  dropped = 0;
  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.#headBytes < this.cap) {
      const take = chunk.subarray(0, this.cap - this.#headBytes);
      this.#head.push(take);
      this.#headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.#tail.push(chunk);
    this.#tailBytes += chunk.length;
    while (this.#tail.length > 1 && this.#tailBytes - this.#tail[0].length >= this.cap) {
      const first = this.#tail.shift()!;
      this.#tailBytes -= first.length;
      this.dropped += first.length;
    }
  }

  text(): string {
    const head = Buffer.concat(this.#head).toString('utf8');
    const tail = Buffer.concat(this.#tail).toString('utf8');
    return this.dropped > 0 ? `${head}\n[... ${this.dropped} bytes omitted ...]\n${tail}` : head + tail;
  }
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBy: 'timeout' | 'abort' | null;
  output: HeadTailBuffer;
}

function runBash(command: string, cwd: string, timeoutMs: number, signal: AbortSignal, cap: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const output = new HeadTailBuffer(cap);
    // detached: the command gets its own process group, so a kill reaches everything it started.
    // git must not find a repository above the workspace (e.g. the project .maestro/ lives in).
    const env = { ...toolEnv(), GIT_CEILING_DIRECTORIES: path.dirname(cwd) };
    const child = spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stoppedBy: RunResult['stoppedBy'] = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const timers: NodeJS.Timeout[] = [];
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const stop = (why: 'timeout' | 'abort') => {
      if (stoppedBy !== null) return;
      stoppedBy = why;
      killGroup('SIGTERM');
      timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref());
    };
    const onAbort = () => stop('abort');
    let settled = false;
    const finish = () => {
      if (settled || exit === null) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      clearTimeout(timeoutTimer);
      // The SIGKILL follow-up stays armed after a stop: children that ignored SIGTERM must still die.
      if (stoppedBy === null) for (const t of timers) clearTimeout(t);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ ...exit, stoppedBy, output });
    };
    child.stdout?.on('data', (c: Buffer) => output.push(c));
    child.stderr?.on('data', (c: Buffer) => output.push(c));
    child.on('error', (err) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      clearTimeout(timeoutTimer);
      reject(new Error(`could not start bash: ${err.message}`, { cause: err }));
    });
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      // Background children may hold the pipes open forever; stop waiting for them after a grace.
      timers.push(setTimeout(finish, PIPE_GRACE_MS));
    });
    child.on('close', () => finish());
    const timeoutTimer = setTimeout(() => stop('timeout'), timeoutMs);
    if (signal.aborted) stop('abort');
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

export const bashTool = defineTool({
  name: 'Bash',
  description:
    'Run a shell command (bash -c) in the workspace root. Returns the exit code and combined stdout/stderr; long output is cut to its beginning and end, so filter it with head, tail, grep, awk or sed. Not interactive: stdin is empty.',
  schema,
  async run(args, ctx): Promise<ToolOutput> {
    const timeoutMs = args.timeout_ms ?? DEFAULT_BASH_TIMEOUT_MS;
    const maxChars = budgetChars(ctx.budgetTokens);
    const cwd = await ctx.workspace.resolve('.');
    const r = await runBash(args.command, cwd, timeoutMs, ctx.signal, Math.max(2 * maxChars, 64 * 1024));
    let header: string;
    if (r.stoppedBy === 'timeout') header = `command timed out after ${timeoutMs} ms and its process group was killed; output so far:`;
    else if (r.stoppedBy === 'abort') header = 'command was cancelled (the movement was stopped) and its process group was killed; output so far:';
    else if (r.code !== null) header = `exit code: ${r.code}`;
    else header = `killed by signal ${r.signal}`;
    if (r.output.dropped > 0) header += ` (output was ${r.output.total} bytes)`;
    const body = r.output.text() || '(no output)';
    const cut = truncateText(body, Math.floor((maxChars - header.length - 1) / CHARS_PER_TOKEN), {
      mode: 'head-tail',
      hint: 'Re-run the command filtering its output with head, tail, grep, awk or sed (or redirect it to a file under logs/ and Read or Grep that file).',
    });
    return {
      content: `${header}\n${cut.text}`,
      isError: r.stoppedBy !== null || undefined,
      truncated: cut.truncated || r.output.dropped > 0 || undefined,
    };
  },
});
