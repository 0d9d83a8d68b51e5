// The input/ and output/ listings of the enriched instruction, walked through the workspace resolver.
import { walkFiles } from './safe-fs.js';
import type { Workspace } from './workspace.js';

export const LIST_DIR_CAP = 200;
/** A listing stops walking here: the prompt shows LIST_DIR_CAP names anyway. */
const LIST_DIR_WALK_CAP = 10_000;

/**
 * Files under input/ or output/, as paths relative to the workspace (e.g. "input/a.txt"), sorted.
 * Capped at LIST_DIR_CAP entries plus a final "... N more" line so a huge tree cannot flood the prompt.
 */
export async function listDir(ws: Workspace, sub: 'input' | 'output'): Promise<string[]> {
  let listed: { files: string[]; complete: boolean };
  try {
    const dir = await ws.openDir(sub);
    try {
      listed = await walkFiles(dir.fh, { cap: LIST_DIR_WALK_CAP });
    } finally {
      await dir.fh.close();
    }
  } catch {
    return []; // missing, not a directory, or pointing out of the workspace: nothing to show
  }
  const rel = listed.files.map((f) => `${sub}/${f}`).sort();
  const more = listed.complete ? `${rel.length - LIST_DIR_CAP}` : `${rel.length - LIST_DIR_CAP}+`;
  if (rel.length <= LIST_DIR_CAP && listed.complete) return rel;
  return [...rel.slice(0, LIST_DIR_CAP), `... ${more} more`];
}
