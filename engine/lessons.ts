// Lessons: the only thing besides summaries that passes from one movement to the next (see
// docs/architecture.md, the path of a job). Kept to about 2,000 characters in total by dropping the oldest.
import { refusal, Workspace } from './tools/workspace.js';

export const LESSONS_MAX_CHARS = 2000;
/** One lesson alone may not take the whole budget. */
export const LESSON_MAX_CHARS = 500;

/** Keeps the newest lessons whose rendered lines fit in maxChars; returns them oldest first. */
export function capLessons(lessons: string[], maxChars = LESSONS_MAX_CHARS): string[] {
  const kept: string[] = [];
  let total = 0;
  for (let i = lessons.length - 1; i >= 0; i -= 1) {
    const text = lessons[i].length > LESSON_MAX_CHARS ? `${lessons[i].slice(0, LESSON_MAX_CHARS - 1)}…` : lessons[i];
    const cost = text.length + 3; // "- " and the newline
    if (total + cost > maxChars) break;
    kept.unshift(text);
    total += cost;
  }
  return kept;
}

/** Lessons of a finished movement; COMPLETE without lessons keeps the summary as the lesson. */
export function lessonsOfMovement(next: string | null, lessons: string[], summary: string): string[] {
  const clean = lessons.map((l) => l.trim()).filter(Boolean);
  if (!clean.length && next === 'COMPLETE' && summary.trim()) return [summary.trim()];
  return clean;
}

/** Appends to logs/lessons.jsonl in the workspace: the job's own record of what it learned. */
export async function appendLessonsLog(workspaceRoot: string, movement: string, lessons: string[], at: Date): Promise<void> {
  if (!lessons.length) return;
  const text = lessons.map((l) => `${JSON.stringify({ at: at.toISOString(), movement, text: l })}\n`).join('');
  // Through the workspace resolver: a lessons.jsonl planted as a link out (or a FIFO) is refused, and
  // the copy in the database is what counts, so a refusal skips the file instead of failing the movement.
  await new Workspace(workspaceRoot).appendText('logs/lessons.jsonl', text).catch((err: unknown) => {
    if (!refusal(err)) throw err;
  });
}
