// ReadImage: loads an image from the workspace as an image content part for vision models. The image
// then stays in the movement's messages (seeds, context-flow note) like any other tool result.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from './tool.js';

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
    const file = await ctx.workspace.resolve(args.path);
    const mimeType = MIME_TYPES[path.extname(file).toLowerCase()];
    if (!mimeType) {
      return { isError: true, content: `${args.path} is not a supported image; use png, jpg, gif or webp (Read handles text).` };
    }
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return { isError: true, content: `${args.path} does not exist or is not a file.` };
    if (info.size > MAX_IMAGE_BYTES) {
      return { isError: true, content: `${args.path} is ${info.size} bytes; ReadImage takes images up to ${MAX_IMAGE_BYTES} bytes. Make a smaller copy first (e.g. with Bash).` };
    }
    const base64 = (await readFile(file)).toString('base64');
    const label = ctx.workspace.relative(file);
    return { content: `Loaded image ${label} (${mimeType}, ${info.size} bytes); it follows as an image.`, images: [{ mimeType, base64, label }] };
  },
});
