import fs from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { defineTool } from './tool.js';
import { truncateText } from './truncate.js';
import type { Workspace } from './workspace.js';

export const GLOB_RESULT_CAP = 500;

const schema = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Glob pattern relative to path, e.g. "**/*.ts" or "src/*.{json,yaml}". * stays within one directory, ** spans directories.'),
  path: z.string().optional().describe('Directory to search in, relative to the workspace root (default: the workspace root).'),
});

/** Refuses patterns that would walk out of the search directory (the glob library allows "../"). */
export function checkGlobPattern(pattern: string): string | null {
  if (path.isAbsolute(pattern)) return `glob pattern "${pattern}" is absolute; give it relative to path`;
  if (pattern.split(/[\\/]/).includes('..')) return `glob pattern "${pattern}" contains "..": it must stay inside the job workspace`;
  return null;
}

/**
 * Workspace-relative files under `dir` matching `pattern`, sorted. Symlinks are not followed (they
 * could lead out of the workspace); .git is skipped, and node_modules unless asked for.
 */
export async function globFiles(ws: Workspace, dir: string, pattern: string): Promise<string[]> {
  const wantsNodeModules = pattern.includes('node_modules') || ws.relative(dir).split(path.sep).includes('node_modules');
  const ignore = wantsNodeModules ? ['**/.git/**'] : ['**/.git/**', '**/node_modules/**'];
  const found = await glob(pattern, { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false, expandDirectories: false, ignore });
  return found.map((f) => ws.relative(path.join(dir, f))).sort();
}

/** Resolves `p` to an existing directory, or returns the message telling the model what is wrong. */
export async function resolveDir(ws: Workspace, p: string | undefined): Promise<{ dir: string } | { error: string }> {
  const dir = await ws.resolve(p ?? '.');
  try {
    if (!(await fs.stat(dir)).isDirectory()) return { error: `${ws.relative(dir)} is a file, not a directory` };
  } catch {
    return { error: `directory not found: ${ws.relative(dir)}` };
  }
  return { dir };
}

export const globTool = defineTool({
  name: 'Glob',
  description: `Find files in the workspace by name pattern. Returns workspace-relative paths, sorted, at most ${GLOB_RESULT_CAP}.`,
  schema,
  async run(args, ctx) {
    const bad = checkGlobPattern(args.pattern);
    if (bad) return { isError: true, content: bad };
    const r = await resolveDir(ctx.workspace, args.path);
    if ('error' in r) return { isError: true, content: r.error };
    const files = await globFiles(ctx.workspace, r.dir, args.pattern);
    if (files.length === 0) return { content: `no files match "${args.pattern}" in ${ctx.workspace.relative(r.dir)}` };
    let text = files.slice(0, GLOB_RESULT_CAP).join('\n');
    if (files.length > GLOB_RESULT_CAP) text += `\n... and ${files.length - GLOB_RESULT_CAP} more (${files.length} in all); use a narrower pattern or path`;
    const cut = truncateText(text, ctx.budgetTokens, { mode: 'head', hint: 'Use a narrower pattern or path.' });
    return { content: cut.text, truncated: cut.truncated || undefined };
  },
});
