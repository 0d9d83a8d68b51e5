import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { checkGlobPattern, globFiles, resolveDir } from './glob.tool.js';
import { defineTool } from './tool.js';
import { truncateText } from './truncate.js';

const MAX_FILE_BYTES = 20 * 1024 * 1024;
const MAX_LINE_CHARS = 400;

const schema = z.object({
  pattern: z.string().min(1).describe('JavaScript regular expression to search for, e.g. "function\\s+load" or "TODO".'),
  path: z.string().optional().describe('File or directory to search, relative to the workspace root (default ".").'),
  glob: z.string().optional().describe('Only search files whose name matches this glob, e.g. "*.ts" (any depth) or "src/**/*.md" (relative to path).'),
  ignore_case: z.boolean().optional().describe('Match case-insensitively (default false).'),
  max_results: z.number().int().min(1).max(5000).optional().describe('Stop after this many matching lines (default 200).'),
});

export const grepTool = defineTool({
  name: 'Grep',
  description:
    'Search file contents in the workspace with a regular expression. Returns "file:line: text" for each matching line. Skips .git, node_modules and binary files.',
  schema,
  async run(args, ctx) {
    let re: RegExp;
    try {
      re = new RegExp(args.pattern, args.ignore_case ? 'i' : '');
    } catch (err) {
      return { isError: true, content: `pattern is not a valid JavaScript regular expression: ${(err as Error).message}` };
    }
    const ws = ctx.workspace;
    const target = await ws.resolve(args.path ?? '.');
    let files: string[];
    const stat = await fs.stat(target).catch(() => null);
    if (stat === null) return { isError: true, content: `not found: ${ws.relative(target)}` };
    if (stat.isFile()) {
      files = [ws.relative(target)];
    } else {
      const filter = args.glob ?? '**/*';
      const bad = checkGlobPattern(filter);
      if (bad) return { isError: true, content: bad };
      const r = await resolveDir(ws, args.path);
      if ('error' in r) return { isError: true, content: r.error };
      files = await globFiles(ws, r.dir, filter.includes('/') ? filter : `**/${filter}`);
    }

    const max = args.max_results ?? 200;
    const out: string[] = [];
    let skippedLarge = 0;
    let stoppedEarly = false;
    // Files come from a walk that does not follow symlinks, so joining onto the real root stays inside.
    const root = await ws.resolve('.');
    for (const rel of files) {
      if (stoppedEarly) break;
      const abs = path.resolve(root, rel);
      const st = await fs.lstat(abs).catch(() => null);
      if (st === null || !st.isFile()) continue; // symlinks are not followed
      if (st.size > MAX_FILE_BYTES) {
        skippedLarge++;
        continue;
      }
      const buf = await fs.readFile(abs);
      if (buf.subarray(0, 8192).includes(0)) continue; // binary
      const lines = buf.toString('utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
        if (!re.test(line)) continue;
        if (out.length >= max) {
          stoppedEarly = true;
          break;
        }
        out.push(`${rel}:${i + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`);
      }
    }
    const where = ws.relative(target);
    if (out.length === 0) {
      const note = skippedLarge ? ` (${skippedLarge} files over ${MAX_FILE_BYTES} bytes skipped)` : '';
      return { content: `no matches for /${args.pattern}/ in ${where} (${files.length} files searched)${note}` };
    }
    let text = out.join('\n');
    if (stoppedEarly) text += `\n[stopped after ${max} matches (max_results); narrow the search with path, glob or a more specific pattern]`;
    if (skippedLarge) text += `\n[${skippedLarge} files over ${MAX_FILE_BYTES} bytes were skipped; search them with Bash grep]`;
    const cut = truncateText(text, ctx.budgetTokens, { mode: 'head', hint: 'Narrow the search with path, glob, max_results or a more specific pattern.' });
    return { content: cut.text, truncated: cut.truncated || stoppedEarly || undefined };
  },
});
