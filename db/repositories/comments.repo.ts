// Comments on a job: a person's replies, the agent's questions, the engine's notes.
import { redactSecrets } from '../../core/redact.js';
import type { Db } from '../database.js';
import type { CommentRow } from '../schema.js';
import { iso } from './row-mapping.js';

export interface CommentView {
  id: number;
  jobId: string;
  author: 'user' | 'agent' | 'system';
  body: string;
  createdAt: string;
}

function toCommentView(r: CommentRow): CommentView {
  return { id: Number(r.id), jobId: r.job_id, author: r.author as CommentView['author'], body: r.body, createdAt: iso(r.created_at) };
}

export async function addComment(db: Db, c: { jobId: string; author: CommentView['author']; body: string }): Promise<CommentView> {
  const row = await db
    .insertInto('comments')
    // What a person wrote is kept as written; the engine's and the agent's text loses any secret.
    .values({ job_id: c.jobId, author: c.author, body: c.author === 'user' ? c.body : redactSecrets(c.body) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toCommentView(row);
}

/** Oldest first. */
export async function listComments(db: Db, jobId: string): Promise<CommentView[]> {
  const rows = await db.selectFrom('comments').selectAll().where('job_id', '=', jobId).orderBy('id', 'asc').execute();
  return rows.map(toCommentView);
}

/** The last n comments, oldest first. */
export async function lastComments(db: Db, jobId: string, n: number): Promise<CommentView[]> {
  if (n <= 0) return [];
  const rows = await db
    .selectFrom('comments')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('id', 'desc')
    .limit(n)
    .execute();
  return rows.reverse().map(toCommentView);
}
