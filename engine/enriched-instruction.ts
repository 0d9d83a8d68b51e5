// The enrichedInstruction: what a new movement learns about the job (docs/architecture.md, the path
// of a job).
// Included: the time block, the last 5 comments cut to 500 characters each, the listings of input/
// and output/, the instruction. Never included: older comments, past conversations, logs, file bodies.
export const RECENT_COMMENT_COUNT = 5;
export const COMMENT_MAX_CHARS = 500;

export interface CommentInput {
  author: string;
  body: string;
  createdAt: string;
}

export interface EnrichedInstruction {
  instruction: string;
  comments: string;
  workspace: string;
  time: string;
}

export function buildTimeContextBlock(now: Date, timeZone = 'UTC'): string {
  const local = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    dateStyle: 'full',
    timeStyle: 'long',
  }).format(now);
  return `Current date and time: ${local} (${now.toISOString()})`;
}

/** Keeps a comment within max characters, the last one being an ellipsis when it was cut. */
export function cutComment(body: string, max = COMMENT_MAX_CHARS): string {
  return body.length <= max ? body : `${body.slice(0, max - 1)}…`;
}

export function recentComments(comments: CommentInput[], count = RECENT_COMMENT_COUNT): CommentInput[] {
  return comments.slice(-count).map((c) => ({ ...c, body: cutComment(c.body) }));
}

export function buildEnrichedInstruction(input: {
  now: Date;
  instruction: string;
  comments: CommentInput[];
  inputFiles: string[];
  outputFiles: string[];
}): EnrichedInstruction {
  const comments = recentComments(input.comments);
  const commentText = comments.length
    ? comments.map((c) => `- ${c.author} (${c.createdAt}): ${c.body}`).join('\n')
    : '(no comments yet)';
  return {
    instruction: input.instruction,
    comments: commentText,
    workspace: [`input/: ${listing(input.inputFiles)}`, `output/: ${listing(input.outputFiles)}`].join('\n'),
    time: buildTimeContextBlock(input.now),
  };
}

function listing(files: string[]): string {
  return files.length ? `\n${files.map((f) => `  ${f}`).join('\n')}` : '(empty)';
}
