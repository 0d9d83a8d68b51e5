// Checklists the job keeps in logs/checklists/*.json are shown to every movement with their current
// state, so work tracked across movements survives without passing conversations along.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

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
  const dir = path.join(workspaceRoot, 'logs', 'checklists');
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).sort();
  if (!files.length) return null;
  const blocks: string[] = [];
  for (const file of files) {
    const text = await readFile(path.join(dir, file), 'utf8').catch(() => '');
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
