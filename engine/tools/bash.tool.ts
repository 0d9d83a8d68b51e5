// Bash runs inside the job's sandbox (engine/sandbox): the workspace read-write, the system read-only,
// an allowlisted environment, no network unless the movement has `network: true`, and every process
// it started gone when the call returns, times out or is cancelled.
import { z } from 'zod';
import { getSandbox, SandboxNetworkRefusedError, SandboxUnavailableError, SandboxWorkspaceError } from '../sandbox/index.js';
import { defineTool, type ToolOutput } from './tool.js';
import { budgetChars, CHARS_PER_TOKEN, truncateText } from './truncate.js';

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
export const MAX_BASH_TIMEOUT_MS = 600_000;
/** Bytes of output kept in memory at most (head and tail), whatever the command prints. */
const MIN_CAPTURE_BYTES = 64 * 1024;

const schema = z.object({
  command: z.string().min(1).max(100_000).describe('Shell command, run with bash -c in the workspace root directory.'),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(MAX_BASH_TIMEOUT_MS)
    .optional()
    .describe(`Kill the command after this many milliseconds (default ${DEFAULT_BASH_TIMEOUT_MS}, max ${MAX_BASH_TIMEOUT_MS}).`),
});

/** 128 + signal number, as bash reports a child killed by a signal. */
const LIMIT_EXITS: Record<number, string> = {
  152: 'the command used up its CPU time limit (SIGXCPU)',
  153: 'the command tried to write a file larger than the sandbox allows (SIGXFSZ)',
};

export const bashTool = defineTool({
  name: 'Bash',
  description:
    'Run a shell command (bash -c) in the workspace root, inside a sandbox: only the workspace and the system directories exist, no network unless this step has it. Returns the exit code and combined stdout/stderr; long output is cut to its beginning and end, so filter it with head, tail, grep, awk or sed. Not interactive: stdin is empty. Background processes end with the call.',
  schema,
  async run(args, ctx): Promise<ToolOutput> {
    const timeoutMs = args.timeout_ms ?? DEFAULT_BASH_TIMEOUT_MS;
    const maxChars = budgetChars(ctx.budgetTokens);
    const workspace = await ctx.workspace.resolve('.');
    let r;
    try {
      r = await getSandbox().run({
        argv: ['bash', '-c', args.command],
        workspace,
        env: { ...ctx.sandbox?.env, GIT_CEILING_DIRECTORIES: workspace },
        network: ctx.sandbox?.network ? 'outside' : 'none',
        timeoutMs,
        signal: ctx.signal,
        outputCapBytes: Math.max(2 * maxChars, MIN_CAPTURE_BYTES),
        mergeStderr: true,
      });
    } catch (err) {
      if (err instanceof SandboxUnavailableError || err instanceof SandboxNetworkRefusedError || err instanceof SandboxWorkspaceError) {
        return { isError: true, content: `Bash cannot run on this worker: ${err.message}` };
      }
      throw err;
    }
    let header: string;
    if (r.stoppedBy === 'timeout') header = `command timed out after ${timeoutMs} ms and every process it started was killed; output so far:`;
    else if (r.stoppedBy === 'abort') header = 'command was cancelled (the movement was stopped) and every process it started was killed; output so far:';
    else if (r.code !== null) header = `exit code: ${r.code}${LIMIT_EXITS[r.code] ? ` (${LIMIT_EXITS[r.code]})` : ''}`;
    else header = `killed by signal ${r.signal}`;
    if (r.stdout.dropped > 0) header += ` (output was ${r.stdout.total} bytes)`;
    const body = r.stdout.text() || '(no output)';
    const cut = truncateText(body, Math.floor((maxChars - header.length - 1) / CHARS_PER_TOKEN), {
      mode: 'head-tail',
      hint: 'Re-run the command filtering its output with head, tail, grep, awk or sed (or redirect it to a file under logs/ and Read or Grep that file).',
    });
    return {
      content: `${header}\n${cut.text}`,
      isError: r.stoppedBy !== null || undefined,
      truncated: cut.truncated || r.stdout.dropped > 0 || undefined,
    };
  },
});
