import fs from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from './tool.js';

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
  description:
    'Replace exact text in an existing workspace file. old_string must match the file exactly (Read it first) and be unique unless replace_all is set.',
  schema,
  async run(args, ctx) {
    const abs = await ctx.workspace.resolve(args.path);
    const rel = ctx.workspace.relative(abs);
    if (args.old_string === '') return { isError: true, content: 'old_string is empty; to create or overwrite a file use Write.' };
    if (args.old_string === args.new_string) return { isError: true, content: 'old_string and new_string are identical; nothing to change.' };
    let text: string;
    try {
      text = await fs.readFile(abs, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { isError: true, content: `file not found: ${rel}. Use Write to create it, or Glob to find the file you mean.` };
      if (code === 'EISDIR') return { isError: true, content: `${rel} is a directory; give a file path.` };
      throw err;
    }
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
    await fs.writeFile(abs, text.split(args.old_string).join(args.new_string), 'utf8');
    return { content: `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${rel}` };
  },
});
