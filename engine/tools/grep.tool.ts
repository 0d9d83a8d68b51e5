import path from 'node:path';
import { z } from 'zod';
import { checkGlobPattern, globMatcher, openSearchDir } from './glob.tool.js';
import { RG_TIMEOUT_MS, rgError, runRipgrep, skipDirGlobs, TokenSplitter, wantsNodeModules } from './ripgrep.js';
import { defineTool, type ToolOutput } from './tool.js';
import { truncateText } from './truncate.js';
import { refusal, WorkspaceFileError, type OpenFile } from './workspace.js';

const MAX_FILE_SIZE = '20M';
const MAX_LINE_CHARS = 400;
/** rg cuts longer lines itself, so one minified file cannot flood the pipe. */
const RG_MAX_COLUMNS = '2000';

const schema = z.object({
  pattern: z.string().min(1).describe('Regular expression in ripgrep\'s syntax (Rust regex: no backreferences or lookaround), e.g. "function\\s+load" or "TODO".'),
  path: z.string().optional().describe('File or directory to search, relative to the workspace root (default ".").'),
  glob: z.string().optional().describe('Only search files whose name matches this glob, e.g. "*.ts" (any depth) or "src/**/*.md" (relative to path).'),
  ignore_case: z.boolean().optional().describe('Match case-insensitively (default false).'),
  max_results: z.number().int().min(1).max(5000).optional().describe('Stop after this many matching lines (default 200).'),
});

/** Basename globs rg reads exactly as picomatch does, passed on so rg skips other files early. */
const SIMPLE_BASENAME_GLOB = /^[A-Za-z0-9_.*?{},-]+$/;

/** rg's glob syntax for exactly one file name (backslash escapes every special character). */
const literalGlob = (name: string) => name.replace(/[\\*?[\]{}!,]/g, (c) => `\\${c}`);

export const grepTool = defineTool({
  name: 'Grep',
  description:
    'Search file contents in the workspace with a regular expression (ripgrep, Rust regex syntax; matching time is linear, no backreferences or lookaround). Returns "file:line: text" for each matching line. Skips .git, node_modules, binary files and files over 20 MB; symbolic links are not followed.',
  schema,
  async run(args, ctx) {
    const ws = ctx.workspace;
    let cwd: string;
    let where: string;
    let prefix: string;
    const rgArgs = ['--line-number', '--with-filename', '--no-heading', '--null', '--max-filesize', MAX_FILE_SIZE];
    rgArgs.push('--max-columns', RG_MAX_COLUMNS, '--max-columns-preview');
    if (args.ignore_case) rgArgs.push('--ignore-case');
    let keep: (rel: string) => boolean = () => true;

    let single: OpenFile | null = null;
    try {
      single = await ws.openFile(args.path ?? '.');
      await single.fh.close();
    } catch (err) {
      if (!(err instanceof WorkspaceFileError && err.kind === 'is_directory')) {
        const r = refusal(err);
        if (r) return r;
        throw err;
      }
    }
    if (single !== null) {
      // One file: rg walks its real directory one level deep and keeps just that name, so a link
      // swapped in meanwhile is skipped like every link, not followed.
      const name = path.basename(single.abs);
      cwd = path.dirname(single.abs);
      where = single.rel;
      prefix = path.dirname(single.rel) === '.' ? '' : `${path.dirname(single.rel)}/`;
      rgArgs.push('--max-depth', '1', '--glob', literalGlob(name), ...skipDirGlobs(true));
      keep = (rel) => rel === name;
    } else {
      const dir = await openSearchDir(ctx, args.path);
      if ('content' in dir) return dir;
      cwd = dir.abs;
      where = dir.rel;
      prefix = dir.rel === '.' ? '' : `${dir.rel}/`;
      const filter = args.glob ?? '**/*';
      const bad = checkGlobPattern(filter);
      if (bad) return { isError: true, content: bad };
      if (!filter.includes('/') && SIMPLE_BASENAME_GLOB.test(filter)) rgArgs.push('--glob', filter);
      rgArgs.push(...skipDirGlobs(wantsNodeModules(filter, dir.rel)));
      const match = globMatcher(filter.includes('/') ? filter : `**/${filter}`);
      keep = (rel) => match(rel);
    }
    rgArgs.push('-e', args.pattern, '--', '.');

    const max = args.max_results ?? 200;
    const out: string[] = [];
    let stoppedEarly = false;
    let file = '';
    const split = new TokenSplitter([0, 0x0a]);
    const outcome = await runRipgrep(ctx, 'Grep', cwd, rgArgs, (chunk) =>
      split.push(chunk, (token, turn) => {
        if (turn === 0) {
          file = token.toString('utf8').replace(/^\.\//, '');
          return true;
        }
        if (!keep(file)) return true;
        let text = token.toString('utf8');
        const colon = text.indexOf(':');
        const lineNo = text.slice(0, colon);
        text = text.slice(colon + 1);
        if (text.endsWith('\r')) text = text.slice(0, -1);
        if (out.length >= max) {
          stoppedEarly = true;
          return false;
        }
        out.push(`${prefix}${file}:${lineNo}: ${text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text}`);
        return true;
      }),
    );
    if (!outcome.ok) return { isError: true, content: outcome.message };
    const { result } = outcome;
    if (result.code === 2 && out.length === 0 && !stoppedEarly) {
      const msg = rgError(result);
      if (/regex|pattern/i.test(msg)) {
        return { isError: true, content: `pattern is not a valid regular expression (ripgrep uses Rust regex syntax: no backreferences or lookaround):\n${msg}` };
      }
      if (msg !== '') return { isError: true, content: `Grep failed: ${msg}` };
    }
    const timedOut = result.stoppedBy === 'timeout';
    if (out.length === 0) {
      if (timedOut) return { isError: true, content: `Grep timed out after ${RG_TIMEOUT_MS / 1000} s in ${where}; narrow the search with path or glob.` };
      return { content: `no matches for /${args.pattern}/ in ${where}` };
    }
    let text = out.join('\n');
    if (stoppedEarly) text += `\n[stopped after ${max} matches (max_results); narrow the search with path, glob or a more specific pattern]`;
    else if (timedOut) text += `\n[Grep timed out after ${RG_TIMEOUT_MS / 1000} s: these are the matches found so far; narrow the search with path or glob]`;
    else if (result.stoppedBy === 'output') text += '\n[ripgrep produced too much output: these are the first matches; narrow the search with path or glob]';
    const cut = truncateText(text, ctx.budgetTokens, { mode: 'head', hint: 'Narrow the search with path, glob, max_results or a more specific pattern.' });
    return { content: cut.text, truncated: cut.truncated || stoppedEarly || undefined } satisfies ToolOutput;
  },
});
