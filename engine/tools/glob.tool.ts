import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { RG_TIMEOUT_MS, runRipgrep, skipDirGlobs, TokenSplitter, wantsNodeModules } from './ripgrep.js';
import { defineTool, type ToolContext, type ToolOutput } from './tool.js';
import { truncateText } from './truncate.js';
import { refusal, WorkspaceFileError, type OpenDir } from './workspace.js';

export const GLOB_RESULT_CAP = 500;
/** The walk stops listing here; a pattern can only narrow what was listed. */
export const GLOB_LIST_CAP = 200_000;

const schema = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Glob pattern relative to path, e.g. "**/*.ts" or "src/*.{json,yaml}". * stays within one directory, ** spans directories.'),
  path: z.string().optional().describe('Directory to search in, relative to the workspace root (default: the workspace root).'),
});

/** A friendly refusal for patterns that could only mean "outside" (they would match nothing anyway). */
export function checkGlobPattern(pattern: string): string | null {
  if (pattern.includes('\0')) return 'glob pattern contains a NUL byte';
  if (path.isAbsolute(pattern)) return `glob pattern "${pattern}" is absolute; give it relative to path`;
  if (pattern.split(/[\\/]/).includes('..')) return `glob pattern "${pattern}" contains "..": it must stay inside the job workspace`;
  return null;
}

/** The current semantics: relative to the search directory, dot files included, * within a directory. */
export function globMatcher(pattern: string): (rel: string) => boolean {
  return picomatch(pattern.replace(/^(\.\/)+/, ''), { dot: true, posix: true });
}

const isSkipped = (rel: string, withNodeModules: boolean) => {
  const parts = rel.split('/');
  return parts.includes('.git') || (!withNodeModules && parts.includes('node_modules'));
};

/** A verified search directory, or the error result saying what is wrong with it. */
export async function openSearchDir(ctx: ToolContext, p: string | undefined): Promise<OpenDir | ToolOutput> {
  try {
    const dir = await ctx.workspace.openDir(p ?? '.');
    await dir.fh.close(); // rg starts from its real path; the sandbox keeps it from going anywhere else
    return dir;
  } catch (err) {
    if (err instanceof WorkspaceFileError && err.kind === 'not_a_directory') return { isError: true, content: err.message };
    const r = refusal(err);
    if (r) return r;
    throw err;
  }
}

/**
 * Files under `dir` (workspace-relative, sorted) whose path relative to `dir` passes `keep`, as rg
 * lists them from inside the sandbox: regular files only, symlinks never followed.
 */
export async function listFiles(
  ctx: ToolContext,
  tool: string,
  dir: OpenDir,
  keep: (rel: string) => boolean,
  withNodeModules: boolean,
): Promise<{ files: string[]; complete: boolean } | ToolOutput> {
  const files: string[] = [];
  let listed = 0;
  const split = new TokenSplitter([0]);
  const outcome = await runRipgrep(ctx, tool, dir.abs, ['--files', '-0', ...skipDirGlobs(withNodeModules), '--', '.'], (chunk) =>
    split.push(chunk, (token) => {
      const rel = token.toString('utf8').replace(/^\.\//, '');
      if (++listed > GLOB_LIST_CAP) return false;
      if (!isSkipped(rel, withNodeModules) && keep(rel)) files.push(dir.rel === '.' ? rel : `${dir.rel}/${rel}`);
      return true;
    }),
  );
  if (!outcome.ok) return { isError: true, content: outcome.message };
  const { result } = outcome;
  if (result.stoppedBy === 'timeout') return { isError: true, content: `${tool} timed out after ${RG_TIMEOUT_MS / 1000} s listing ${dir.rel}; give a narrower path.` };
  if (result.code !== 0 && result.code !== 1 && files.length === 0 && !split.stopped) {
    return { isError: true, content: `${tool} could not list ${dir.rel}: ${result.stderr.text().trim().slice(0, 1500)}` };
  }
  return { files: files.sort(), complete: !split.stopped && result.stoppedBy === null };
}

export const globTool = defineTool({
  name: 'Glob',
  description: `Find files in the workspace by name pattern. Returns workspace-relative paths, sorted, at most ${GLOB_RESULT_CAP}. Skips .git, and node_modules unless the pattern or path names it; symbolic links are not followed.`,
  schema,
  async run(args, ctx) {
    const bad = checkGlobPattern(args.pattern);
    if (bad) return { isError: true, content: bad };
    const dir = await openSearchDir(ctx, args.path);
    if ('content' in dir) return dir;
    const listed = await listFiles(ctx, 'Glob', dir, globMatcher(args.pattern), wantsNodeModules(args.pattern, dir.rel));
    if ('content' in listed) return listed;
    const { files, complete } = listed;
    const partial = complete ? '' : `\n[the listing stopped after ${GLOB_LIST_CAP} files; give a narrower path]`;
    if (files.length === 0) return { content: `no files match "${args.pattern}" in ${dir.rel}${partial}` };
    let text = files.slice(0, GLOB_RESULT_CAP).join('\n');
    if (files.length > GLOB_RESULT_CAP) text += `\n... and ${files.length - GLOB_RESULT_CAP} more (${files.length} in all); use a narrower pattern or path`;
    text += partial;
    const cut = truncateText(text, ctx.budgetTokens, { mode: 'head', hint: 'Use a narrower pattern or path.' });
    return { content: cut.text, truncated: cut.truncated || undefined };
  },
});
