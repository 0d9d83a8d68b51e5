// `maestro show ID`: one job with its movements and last comments; --events adds its event log.
import type { Command } from 'commander';
import { apiClientFromEnv, type ApiClient } from '../api-client.js';
import { formatFollowEvent, formatJobDetail, printJson } from '../format.js';

const EVENT_PAGE = 500;

export function registerShowCommand(program: Command): void {
  program
    .command('show')
    .description('show a job, its movements and its last comments')
    .argument('<id>', 'job id')
    .option('--events', 'also print every event: movements, LLM calls, tool calls, thresholds')
    .option('--json', 'print {...job, comments[, events]} as JSON')
    .action(async (id: string, opts: { json?: boolean; events?: boolean }) => {
      const client = await apiClientFromEnv();
      const [job, comments] = await Promise.all([client.getJob(id), client.listComments(id)]);
      const events = opts.events ? await allEvents(client, id) : undefined;
      if (opts.json) {
        printJson({ ...job, comments, ...(events ? { events } : {}) });
        return;
      }
      process.stdout.write(`${formatJobDetail(job, comments)}\n`);
      if (events) {
        process.stdout.write('\nevents:\n');
        for (const e of events) {
          const line = formatFollowEvent(e);
          if (line) process.stdout.write(`${e.createdAt}  ${line.trimStart()}\n`);
        }
      }
    });
}

async function allEvents(client: ApiClient, jobId: string) {
  const out: Awaited<ReturnType<ApiClient['listEvents']>> = [];
  for (;;) {
    const page = await client.listEvents(jobId, { after: out.at(-1)?.id ?? 0, limit: EVENT_PAGE });
    out.push(...page);
    if (page.length < EVENT_PAGE) return out;
  }
}
