import { z } from 'zod';
import { replaceContent } from './safe-fs.js';
import { defineTool } from './tool.js';
import { refusal, WorkspaceFileError } from './workspace.js';

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
    let file;
    try {
      // Opened without O_TRUNC and verified first: a refused target is never emptied.
      file = await ctx.workspace.openFileForWrite(args.path, { create: true });
    } catch (err) {
      if (err instanceof WorkspaceFileError && err.kind === 'is_directory') {
        return { isError: true, content: `${ctx.workspace.relative(await ctx.workspace.resolve(args.path))} is a directory; give a file path.` };
      }
      const r = refusal(err);
      if (r) return r;
      throw err;
    }
    try {
      const data = Buffer.from(args.content, 'utf8');
      await replaceContent(file.fh, data);
      return { content: `Wrote ${data.length} bytes to ${file.rel}` };
    } finally {
      await file.fh.close();
    }
  },
});
