import type fs from 'node:fs/promises';
import { z } from 'zod';
import { readUpTo } from './safe-fs.js';
import { defineTool, type ToolOutput } from './tool.js';
import { budgetChars, safeCut, truncateLines } from './truncate.js';
import { refusal, WorkspaceFileError, type OpenFile } from './workspace.js';

/** Room kept for headers and the truncation notice, so the whole result stays within budget. */
const NOTICE_RESERVE = 400;
/** Small budgets still show some content: the reserve never takes more than half. */
const reserveFor = (maxChars: number) => Math.min(NOTICE_RESERVE, Math.floor(maxChars / 2));
/** Bigger files are only read by byte window: by-line reading holds the whole file in memory. */
export const MAX_LINE_MODE_BYTES = 16 * 1024 * 1024;
const SNIFF_BYTES = 8192;

const schema = z.object({
  path: z.string().describe('File to read, relative to the workspace root (absolute paths inside the workspace also work).'),
  offset: z.number().int().min(1).optional().describe('1-based line number to start at (default 1).'),
  limit: z.number().int().min(1).optional().describe('How many lines to return at most (default: as many as fit).'),
  byte_offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Read raw text from this byte position instead of by line (offset and limit are then ignored); use it to continue inside a very long line.'),
});

export async function isBinaryFile(fh: fs.FileHandle, size: number): Promise<boolean> {
  const buf = Buffer.alloc(Math.min(size, SNIFF_BYTES));
  const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
  return buf.subarray(0, bytesRead).includes(0);
}

/** Bytes of `buf` that form complete UTF-8 sequences (a window may end mid-character). */
function completeUtf8Length(buf: Buffer): number {
  for (let back = 1; back <= Math.min(4, buf.length); back++) {
    const b = buf[buf.length - back];
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? buf.length - back : buf.length;
  }
  return buf.length;
}

async function readByteWindow(fh: fs.FileHandle, size: number, from: number, maxChars: number, rel: string): Promise<ToolOutput> {
  if (size === 0) return { content: `(${rel} is empty)` };
  if (from >= size) return { isError: true, content: `byte_offset ${from} is past the end of ${rel} (${size} bytes)` };
  const room = Math.max(1, maxChars - reserveFor(maxChars));
  const buf = Buffer.alloc(Math.min(room + 3, size - from));
  const { bytesRead } = await fh.read(buf, 0, buf.length, from);
  let start = 0;
  // Start on a character boundary: skip continuation bytes of a character that began before `from`.
  while (start < Math.min(3, bytesRead) && (buf[start] & 0xc0) === 0x80) start++;
  let window = buf.subarray(start, Math.min(bytesRead, start + room));
  if (from + start + window.length < size) window = window.subarray(0, completeUtf8Length(window));
  const first = from + start;
  const end = first + window.length;
  const header = `(${rel}: bytes ${first}-${end} of ${size})\n`;
  if (end >= size) return { content: header + window.toString('utf8') };
  return {
    content: `${header}${window.toString('utf8')}\n[output truncated to fit the context budget: continue with Read byte_offset=${end}, or use Grep to find the part you need.]`,
    truncated: true,
  };
}

function readLines(text: string, args: { offset?: number; limit?: number }, maxChars: number, rel: string): ToolOutput {
  if (text === '') return { content: `(${rel} is empty)` };
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const total = lines.length;
  const start = args.offset ?? 1;
  if (start > total) return { isError: true, content: `offset ${start} is past the end of ${rel} (${total} lines)` };
  const end = args.limit === undefined ? total : Math.min(total, start + args.limit - 1);
  const prefix = (n: number) => `${String(n).padStart(6)}\t`;
  const strip = (l: string) => (l.endsWith('\r') ? l.slice(0, -1) : l);

  // Format only what can fit: a 200,000-line file must not cost 200,000 string copies.
  const room = Math.max(0, maxChars - reserveFor(maxChars));
  const formatted: string[] = [];
  let used = 0;
  for (let n = start; n <= end && used <= room; n++) {
    const line = prefix(n) + strip(lines[n - 1]);
    formatted.push(line);
    used += line.length + 1;
  }
  const { count, partialChars } = truncateLines(formatted, room);
  const shownEnd = start + count - 1;

  if (count === formatted.length && shownEnd === end) {
    const body = formatted.join('\n');
    if (end < total) return { content: `${body}\n(${rel} has ${total} lines; continue with Read offset=${end + 1})` };
    return { content: body };
  }
  if (count > 0) {
    return {
      content: `${formatted.slice(0, count).join('\n')}\n[output truncated to fit the context budget: showing lines ${start}-${shownEnd} of ${total} in ${rel}. Continue with Read offset=${shownEnd + 1} (and a limit), or use Grep to find the part you need.]`,
      truncated: true,
    };
  }
  // Not even one line fits: cut inside it and point at the byte where the next read should start.
  const raw = lines[start - 1];
  const keepChars = safeCut(raw, Math.max(0, (partialChars ?? 0) - prefix(start).length));
  let lineStartByte = 0;
  for (let i = 0; i < start - 1; i++) lineStartByte += Buffer.byteLength(lines[i]) + 1;
  const nextByte = lineStartByte + Buffer.byteLength(raw.slice(0, keepChars));
  return {
    content: `${prefix(start)}${raw.slice(0, keepChars)}\n[output truncated to fit the context budget: line ${start} of ${rel} is ${raw.length} characters long and was cut after ${keepChars}. Continue with Read byte_offset=${nextByte}, or use Grep to find the part you need.]`,
    truncated: true,
  };
}

export const readTool = defineTool({
  name: 'Read',
  description:
    'Read a text file from the workspace. Returns numbered lines (like cat -n). Large results are cut to fit the context, with a notice saying how to read on (offset, byte_offset) — prefer Grep or offset/limit to read only what you need.',
  schema,
  async run(args, ctx) {
    let file: OpenFile;
    try {
      file = await ctx.workspace.openFile(args.path);
    } catch (err) {
      if (err instanceof WorkspaceFileError && err.kind === 'not_found') return { isError: true, content: `${err.message}. Use Glob to find the file you mean.` };
      const r = refusal(err);
      if (r) return r;
      throw err;
    }
    const { fh, rel, size } = file;
    const maxChars = budgetChars(ctx.budgetTokens);
    try {
      if (await isBinaryFile(fh, size)) {
        return {
          isError: true,
          content: `${rel} looks like a binary file (${size} bytes); Read only shows text. Inspect it with Bash (e.g. file, xxd | head, strings | head).`,
        };
      }
      if (args.byte_offset !== undefined) return await readByteWindow(fh, size, args.byte_offset, maxChars, rel);
      if (size > MAX_LINE_MODE_BYTES) {
        return {
          isError: true,
          content: `${rel} is ${size} bytes, too large to read by line (the limit is ${MAX_LINE_MODE_BYTES}). Use Read with byte_offset=0, Grep, or Bash (head, tail, sed -n 'X,Yp').`,
        };
      }
      // Through the verified descriptor, and no more than it held when opened.
      return readLines((await readUpTo(fh, size)).toString('utf8'), args, maxChars, rel);
    } finally {
      await fh.close();
    }
  },
});
