// Checklists the job keeps in logs/checklists/*.json are shown to every movement with their current
// state, so work tracked across movements survives without passing conversations along.
import path from 'node:path';
import { z } from 'zod';
import { Workspace } from './tools/workspace.js';

const ChecklistSchema = z.object({
  title: z.string().optional(),
  items: z.array(
    z.union([
      z.string().transform((text) => ({ text, done: false })),
      z.object({ text: z.string(), done: z.boolean().default(false) }),
    ]),
  ),
});

export const CHECKLISTS_MAX_CHARS = 3000;

export async function renderChecklists(workspaceRoot: string): Promise<string | null> {
  // Through the workspace resolver: a checklist that is a link out of the workspace is not read.
  const ws = new Workspace(workspaceRoot);
  const listed = await ws.listFiles('logs/checklists', { cap: 200, maxDepth: 1 }).catch(() => ({ files: [] as string[] }));
  const files = listed.files.map((f) => path.basename(f)).filter((f) => f.endsWith('.json')).sort();
  if (!files.length) return null;
  const blocks: string[] = [];
  for (const file of files) {
    const text = await ws.readText(`logs/checklists/${file}`, 256 * 1024).catch(() => '');
    let parsed: z.infer<typeof ChecklistSchema> | null = null;
    try {
      const result = ChecklistSchema.safeParse(JSON.parse(text));
      parsed = result.success ? result.data : null;
    } catch {
      parsed = null;
    }
    if (!parsed) {
      blocks.push(`### ${file}\n(unreadable: expected {"title": "...", "items": [{"text": "...", "done": false}]})`);
      continue;
    }
    const done = parsed.items.filter((i) => i.done).length;
    const lines = parsed.items.map((i) => `- [${i.done ? 'x' : ' '}] ${i.text}`);
    blocks.push(`### ${parsed.title ?? file} (${done}/${parsed.items.length} done, logs/checklists/${file})\n${lines.join('\n')}`);
  }
  const all = blocks.join('\n\n');
  return all.length > CHECKLISTS_MAX_CHARS ? `${all.slice(0, CHECKLISTS_MAX_CHARS - 1)}…` : all;
}
