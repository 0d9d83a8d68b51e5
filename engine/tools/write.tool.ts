import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from './tool.js';

const schema = z.object({
  path: z.string().describe('File to write, relative to the workspace root. Parent directories are created.'),
  content: z.string().describe('The complete new content of the file (replaces what is there).'),
});

export const writeTool = defineTool({
  name: 'Write',
  description:
    'Create or overwrite a file in the workspace with the given content. For small changes to an existing file prefer Edit.',
  schema,
  async run(args, ctx) {
    const abs = await ctx.workspace.resolve(args.path);
    const rel = ctx.workspace.relative(abs);
    try {
      if ((await fs.stat(abs)).isDirectory()) return { isError: true, content: `${rel} is a directory; give a file path.` };
    } catch {
      // Not there yet: the normal case.
    }
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, args.content, 'utf8');
    return { content: `Wrote ${Buffer.byteLength(args.content)} bytes to ${rel}` };
  },
});
