// `maestro reply ID "text"`: answers a job. The API stores the comment first, then signals the
// workflow; a job parked on a question resumes the movement that asked, with the reply among its
// last 5 comments. A reply to a running job is kept for its next movement.
import type { Command } from 'commander';
import { apiClientFromEnv, type ApiPostedComment } from '../api-client.js';
import { CliError, printJson } from '../format.js';

export function registerReplyCommand(program: Command): void {
  program
    .command('reply')
    .description('reply to a job (wakes a job waiting on a question)')
    .argument('<id>', 'job id')
    .argument('<text...>', 'the reply (several words are joined with spaces)')
    .option('--json', 'print the stored comment as JSON')
    .action(async (id: string, words: string[], opts: { json?: boolean }) => {
      const text = words.join(' ').trim();
      if (text === '') throw new CliError('the reply is empty', 2);
      const client = await apiClientFromEnv();
      const job = await client.getJob(id);
      const comment = await client.addComment(id, text);
      if (opts.json) printJson(comment);
      else process.stdout.write(`${describeReply(comment, job.status, job.waitReason)}\n`);
    });
}

/** What happened to the reply, in words: whether it woke the job or waits for its next movement. */
export function describeReply(comment: ApiPostedComment, status: string, waitReason: string | null): string {
  const head = `reply stored as comment ${comment.id} on job ${comment.jobId}`;
  if (!comment.signalled) return `${head}; the job is ${status}, so nothing was woken`;
  if (status === 'waiting_human' && waitReason === 'question') return `${head}; the job resumes the movement that asked`;
  if (status.startsWith('waiting')) return `${head}; the job waits on ${waitReason ?? status}, not a reply: its next movement will read it`;
  return `${head}; the job's next movement will read it`;
}
