// `maestro run`: submit a job through the API, optionally following it until it ends.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { TERMINAL_STATUSES } from '../../core/types.js';
import type { JobStatus } from '../../core/types.js';
import { ApiUnreachableError, apiClientFromEnv } from '../api-client.js';
import type { ApiClient, ApiJob, SubmitJobRequest } from '../api-client.js';
import { CliError, formatFinalJob, formatFollowEvent, printJson } from '../format.js';

interface RunOptions {
  piece: string;
  workspace?: string;
  follow?: boolean;
  json?: boolean;
  pollMs: string;
}

/** How long --follow keeps retrying while the API is unreachable (it may be restarting). */
const UNREACHABLE_GRACE_MS = 30_000;
const EVENT_PAGE = 200;

// A piece that names a local file is sent as text: the API may run elsewhere (another cwd, a container).
export function pieceRequest(piece: string): Pick<SubmitJobRequest, 'piece' | 'pieceYaml'> {
  const looksLikePath = /[\\/]/.test(piece) || /\.ya?ml$/i.test(piece);
  if (looksLikePath) {
    if (!existsSync(piece) || !statSync(piece).isFile()) throw new CliError(`piece file not found: ${piece}`);
    return { pieceYaml: readFileSync(piece, 'utf8') };
  }
  return { piece };
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('submit a job and print its id (with --follow, show each movement until the job ends)')
    .argument('<instruction...>', 'what the agent should do')
    .option('-p, --piece <name|file>', 'a built-in piece name or a piece YAML file', 'chat')
    .option('-w, --workspace <dir>', 'workspace folder (default: MAESTRO_HOME/workspaces/<jobId>)')
    .option('-f, --follow', 'follow the job until it ends; exit 0 only if it completed')
    .option('--json', 'print JSON (with --follow: one event per line, the job last)')
    .option('--poll-ms <ms>', 'poll interval for --follow', '1000')
    .action(async (words: string[], opts: RunOptions) => {
      const instruction = words.join(' ').trim();
      if (!instruction) throw new CliError('the instruction is empty', 2);
      const pollMs = Number(opts.pollMs);
      if (!Number.isFinite(pollMs) || pollMs < 10) throw new CliError('--poll-ms must be a number >= 10', 2);

      const client = await apiClientFromEnv();
      const job = await client.submitJob({
        ...pieceRequest(opts.piece),
        instruction,
        ...(opts.workspace ? { workspace: path.resolve(opts.workspace) } : {}),
      });
      if (!opts.follow) {
        if (opts.json) printJson(job);
        else {
          process.stdout.write(`${job.id}\n`);
          process.stderr.write(`job queued; see it with: maestro show ${job.id}\n`);
        }
        return;
      }
      if (!opts.json) process.stdout.write(`job ${job.id} ${job.status} (piece ${job.piece})\n`);
      const final = await followJob(client, job.id, { json: Boolean(opts.json), pollMs });
      if (opts.json) printJson(final);
      else process.stdout.write(`${formatFinalJob(final)}\n`);
      process.exitCode = final.status === 'completed' ? 0 : 1;
    });
}

/** Prints movement events as they arrive; returns the job once it is in a terminal status. */
export async function followJob(client: ApiClient, jobId: string, opts: { json: boolean; pollMs: number }): Promise<ApiJob> {
  let after = 0;
  let lastStatus: JobStatus | undefined;
  let unreachableSince: number | undefined;

  const drain = async () => {
    for (;;) {
      const events = await client.listEvents(jobId, { after, limit: EVENT_PAGE });
      for (const e of events) {
        after = Math.max(after, e.id);
        if (opts.json) {
          if (e.type.startsWith('movement.') || e.type === 'job.status') printJson(e);
          continue;
        }
        const line = formatFollowEvent(e);
        if (line) process.stdout.write(`${line}\n`);
      }
      if (events.length < EVENT_PAGE) return;
    }
  };

  for (;;) {
    try {
      await drain();
      const job = await client.getJob(jobId);
      unreachableSince = undefined;
      if (TERMINAL_STATUSES.includes(job.status)) {
        // Events written just before the status flip would otherwise be missed.
        await drain();
        const { movements: _movements, ...plain } = job;
        return plain;
      }
      if (job.status !== lastStatus && job.status === 'waiting_human' && !opts.json) {
        await printQuestion(client, jobId);
      }
      lastStatus = job.status;
    } catch (err) {
      if (!(err instanceof ApiUnreachableError)) throw err;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > UNREACHABLE_GRACE_MS) throw err;
    }
    await sleep(opts.pollMs);
  }
}

// A parked job usually waits for an answer: show the agent's last words and how to reply.
async function printQuestion(client: ApiClient, jobId: string): Promise<void> {
  const comments = await client.listComments(jobId);
  const question = comments.filter((c) => c.author === 'agent').at(-1);
  if (question) process.stdout.write(`? ${question.body}\n`);
  process.stderr.write(`waiting for a reply (maestro reply ${jobId} "..."); still following, Ctrl-C to stop\n`);
}
