import { z } from 'zod';
import { readUpTo, replaceContent } from './safe-fs.js';
import { defineTool } from './tool.js';
import { refusal, WorkspaceFileError } from './workspace.js';

/** Edit holds the file, and its edited copy, in memory as strings. */
export const EDIT_MAX_BYTES = 4 * 1024 * 1024;

const schema = z.object({
  path: z.string().describe('File to edit, relative to the workspace root.'),
  old_string: z.string().describe('Exact text to replace, whitespace and indentation included. Must occur exactly once unless replace_all is true.'),
  new_string: z.string().describe('Text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string (default false).'),
});

function countOccurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

export const editTool = defineTool({
  name: 'Edit',
  description: `Replace exact text in an existing workspace file (up to ${EDIT_MAX_BYTES / 1024 / 1024} MiB). old_string must match the file exactly (Read it first) and be unique unless replace_all is set.`,
  schema,
  async run(args, ctx) {
    if (args.old_string === '') return { isError: true, content: 'old_string is empty; to create or overwrite a file use Write.' };
    if (args.old_string === args.new_string) return { isError: true, content: 'old_string and new_string are identical; nothing to change.' };
    let file;
    try {
      file = await ctx.workspace.openFileForWrite(args.path, { create: false });
    } catch (err) {
      if (err instanceof WorkspaceFileError && err.kind === 'not_found') {
        return { isError: true, content: `${err.message}. Use Write to create it, or Glob to find the file you mean.` };
      }
      const r = refusal(err);
      if (r) return r;
      throw err;
    }
    const { fh, rel, size } = file;
    try {
      if (size > EDIT_MAX_BYTES) {
        return {
          isError: true,
          content: `${rel} is ${size} bytes; Edit handles files up to ${EDIT_MAX_BYTES} bytes. Change it with Bash (sed -i, a script), or Write it whole.`,
        };
      }
      const text = (await readUpTo(fh, size)).toString('utf8');
      const count = countOccurrences(text, args.old_string);
      if (count === 0) {
        return {
          isError: true,
          content: `old_string was not found in ${rel}. Read the file and copy the exact text, whitespace and indentation included.`,
        };
      }
      if (count > 1 && !args.replace_all) {
        return {
          isError: true,
          content: `old_string occurs ${count} times in ${rel}. Include more surrounding text to make it unique, or set replace_all: true to replace all ${count}.`,
        };
      }
      // split/join, not String.replace: `$&` and friends in new_string must stay literal.
      await replaceContent(fh, Buffer.from(text.split(args.old_string).join(args.new_string), 'utf8'));
      return { content: `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${rel}` };
    } finally {
      await fh.close();
    }
  },
});
