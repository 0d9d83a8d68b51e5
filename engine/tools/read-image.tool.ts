// ReadImage: loads an image from the workspace as an image content part for vision models. The image
// then stays in the movement's messages like any other tool result.
import path from 'node:path';
import { z } from 'zod';
import { readUpTo } from './safe-fs.js';
import { defineTool } from './tool.js';
import { refusal } from './workspace.js';

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const MIME_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

const schema = z.object({
  path: z.string().describe('Image file (png, jpg, gif, webp) relative to the workspace root.'),
});

export const readImageTool = defineTool({
  name: 'ReadImage',
  description: 'Look at an image file in the workspace (png, jpg, gif or webp, up to 5 MB). The image is added to the conversation.',
  schema,
  async run(args, ctx) {
    let file;
    try {
      file = await ctx.workspace.openFile(args.path);
    } catch (err) {
      const r = refusal(err);
      if (r) return r;
      throw err;
    }
    const { fh, rel, size } = file;
    try {
      // The type is judged by the file actually opened (a link named x.png may point at notes.txt).
      const mimeType = MIME_TYPES[path.extname(file.abs).toLowerCase()];
      if (!mimeType) {
        return { isError: true, content: `${args.path} is not a supported image; use png, jpg, gif or webp (Read handles text).` };
      }
      if (size > MAX_IMAGE_BYTES) {
        return { isError: true, content: `${args.path} is ${size} bytes; ReadImage takes images up to ${MAX_IMAGE_BYTES} bytes. Make a smaller copy first (e.g. with Bash).` };
      }
      const base64 = (await readUpTo(fh, size)).toString('base64');
      return { content: `Loaded image ${rel} (${mimeType}, ${size} bytes); it follows as an image.`, images: [{ mimeType, base64, label: rel }] };
    } finally {
      await fh.close();
    }
  },
});
