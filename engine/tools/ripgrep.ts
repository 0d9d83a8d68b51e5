// Grep and Glob run ripgrep inside the job's sandbox: the sandbox shows the process the workspace and
// the system directories only, so what rg can list or read is confined by construction. Its regex
// engine is linear-time, so no pattern can hang the worker. The invocation is safe unsandboxed too
// (MAESTRO_SANDBOX=none): rg walks only from a verified directory, never follows symlinks, reads no
// config or ignore files, and patterns are only ever filters over that walk.
import { getSandbox, SandboxUnavailableError, type SandboxResult } from '../sandbox/index.js';
import type { ToolContext } from './tool.js';

export const RG_TIMEOUT_MS = 30_000;
const RG_OUTPUT_CAP = 4 * 1024 * 1024;

/** Every rg call starts so: no config, no ignore files, hidden files too, links never followed, stable order. */
export const RG_BASE = ['rg', '--no-config', '--no-ignore', '--hidden', '--no-follow', '--sort', 'path', '--color', 'never'];

/** .git is never searched; node_modules only when asked for. */
export function skipDirGlobs(withNodeModules: boolean): string[] {
  return ['--glob', '!.git', ...(withNodeModules ? [] : ['--glob', '!node_modules'])];
}

export function wantsNodeModules(...parts: string[]): boolean {
  return parts.some((p) => p.split(/[\\/]/).includes('node_modules') || p.includes('node_modules'));
}

/**
 * Splits a byte stream into tokens ended by a cycle of delimiters (Glob: NUL; Grep: NUL after the
 * path, newline after the line), across chunk boundaries. `onToken` returns false to stop.
 */
export class TokenSplitter {
  #pending: Buffer[] = [];
  #turn = 0;
  stopped = false;
  constructor(private readonly delims: readonly number[]) {}

  push(chunk: Buffer, onToken: (token: Buffer, turn: number) => boolean): boolean {
    let from = 0;
    while (!this.stopped) {
      const at = chunk.indexOf(this.delims[this.#turn % this.delims.length], from);
      if (at === -1) break;
      const piece = chunk.subarray(from, at);
      const token = this.#pending.length ? Buffer.concat([...this.#pending, piece]) : piece;
      this.#pending = [];
      from = at + 1;
      const turn = this.#turn % this.delims.length;
      this.#turn++;
      if (!onToken(token, turn)) this.stopped = true;
    }
    if (!this.stopped && from < chunk.length) this.#pending.push(Buffer.from(chunk.subarray(from)));
    return !this.stopped;
  }
}

export type RgOutcome = { ok: true; result: SandboxResult } | { ok: false; message: string };

/** Runs rg in the sandbox with the workspace read-only and `cwd` (a verified directory) as its cwd. */
export async function runRipgrep(
  ctx: ToolContext,
  tool: string,
  cwd: string,
  args: string[],
  onStdout: (chunk: Buffer) => boolean,
): Promise<RgOutcome> {
  let result: SandboxResult;
  try {
    result = await getSandbox().run({
      argv: [...RG_BASE, ...args],
      workspace: await ctx.workspace.realRoot(),
      cwd,
      readOnlyWorkspace: true,
      timeoutMs: RG_TIMEOUT_MS,
      signal: ctx.signal,
      outputCapBytes: RG_OUTPUT_CAP,
      onStdout,
    });
  } catch (err) {
    if (err instanceof SandboxUnavailableError) return { ok: false, message: `${tool} is unavailable: ${err.message}` };
    throw err;
  }
  if (result.stoppedBy === 'abort') return { ok: false, message: `${tool} was cancelled` };
  if (result.code === 127) {
    return { ok: false, message: `${tool} needs ripgrep (rg) on the worker: install Debian's ripgrep package` };
  }
  return { ok: true, result };
}

/** rg's own error text, shortened, for an error result. */
export function rgError(result: SandboxResult): string {
  const text = result.stderr.text().trim();
  return text.length > 1500 ? `${text.slice(0, 1500)}…` : text;
}
