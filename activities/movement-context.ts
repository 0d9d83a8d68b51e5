// What a movement is told when it starts (and nothing else): the enrichedInstruction, lessons,
// checklists, feedback addressed to it, git status where asked. And what it passes on when it ends.
import type { JobView, MovementOutcome, PieceMovement, RequestView } from '../core/types.js';
import type { Db } from '../db/database.js';
import { lastComments, listJobs, listRequests } from '../db/repositories/index.js';
import { addFeedback, addLessons, latestFeedbackFor, listLessons } from '../db/repositories/lessons.repo.js';
import { renderChecklists } from '../engine/checklists.js';
import { buildEnrichedInstruction, RECENT_COMMENT_COUNT } from '../engine/enriched-instruction.js';
import { describeGitStatus } from '../engine/git-status.js';
import { appendLessonsLog, capLessons, lessonsOfMovement } from '../engine/lessons.js';
import { buildMovementPrompt } from '../engine/movement-prompt.js';
import { listDir, type Workspace } from '../engine/tools/workspace.js';

export async function buildMovementUserPrompt(
  db: Db,
  job: { id: string; instruction: string },
  movement: PieceMovement,
  workspace: Workspace,
  now: Date,
  note?: string,
): Promise<string> {
  const [comments, inputFiles, outputFiles, lessons, feedback, checklists, gitStatus, requests, children] = await Promise.all([
    lastComments(db, job.id, RECENT_COMMENT_COUNT),
    listDir(workspace, 'input'),
    listDir(workspace, 'output'),
    listLessons(db, job.id),
    latestFeedbackFor(db, job.id, movement.name),
    renderChecklists(workspace.root),
    movement.include_git_status ? describeGitStatus(workspace.root) : Promise.resolve(null),
    listRequests(db, job.id),
    listJobs(db, { parentId: job.id, limit: 200 }),
  ]);
  const enriched = buildEnrichedInstruction({ now, instruction: job.instruction, comments, inputFiles, outputFiles });
  return buildMovementPrompt({
    enriched,
    movement,
    lessons: capLessons(lessons.map((l) => l.text)),
    feedback,
    checklists,
    gitStatus,
    requests: describeRequests(requests),
    subtasks: describeChildren(children.reverse()),
    note,
  });
}

function describeRequests(requests: RequestView[]): string | null {
  if (!requests.length) return null;
  return requests
    .map((r) => {
      const what = r.kind === 'tool' ? `tool ${r.args.tool}` : r.kind === 'package' ? `package ${r.args.manager} ${r.args.name}${r.args.version ? `@${r.args.version}` : ''}` : `subtask in ${r.args.workspace}`;
      return `- ${what}: ${r.status}${r.note ? ` (note: ${r.note})` : ''}`;
    })
    .join('\n');
}

function describeChildren(children: JobView[]): string | null {
  if (!children.length) return null;
  return children
    .map((c) => `- job ${c.id} [${c.status}] ${c.instruction.slice(0, 120)}${c.summary ? `\n  summary: ${c.summary.slice(0, 500)}` : ''}`)
    .join('\n');
}

/** Stores lessons (DB + logs/lessons.jsonl) and, for a verify movement sending the job back, feedback. */
export async function recordMovementHandoff(
  db: Db,
  ctx: { jobId: string; movementRunId: string; movement: PieceMovement; workspace: Workspace; now: Date; movementNames: string[] },
  result: Pick<MovementOutcome, 'next' | 'lessons' | 'summary'>,
): Promise<void> {
  const lessons = lessonsOfMovement(result.next, result.lessons, result.summary);
  await addLessons(db, { jobId: ctx.jobId, movementRunId: ctx.movementRunId, movement: ctx.movement.name, texts: lessons });
  await appendLessonsLog(ctx.workspace.root, ctx.movement.name, lessons, ctx.now);
  if (ctx.movement.verify && result.next && ctx.movementNames.includes(result.next) && result.summary.trim()) {
    await addFeedback(db, {
      jobId: ctx.jobId,
      movementRunId: ctx.movementRunId,
      fromMovement: ctx.movement.name,
      toMovement: result.next,
      text: result.summary,
    });
  }
}
