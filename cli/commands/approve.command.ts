// `maestro approve REQUEST_ID` / `maestro decline REQUEST_ID`: decide a pending approval request
// (a tool, a package, a subtask in another workspace). The API stores the decision, then wakes the job.
import type { Command } from 'commander';
import type { RequestView } from '../../core/types.js';
import { apiClientFromEnv } from '../api-client.js';
import { printJson, requestWhat } from '../format.js';

export function registerApproveCommands(program: Command): void {
  for (const [name, decision, verb] of [
    ['approve', 'approved', 'allow'],
    ['decline', 'declined', 'refuse'],
  ] as const) {
    program
      .command(name)
      .description(`${verb} what a job asked for (see the requests in \`maestro show JOB_ID\`); the job resumes`)
      .argument('<request-id>', 'request id')
      .option('--note <text>', 'a note for the agent; it sees it when the job resumes')
      .option('--json', 'print the decided request as JSON')
      .action(async (id: string, opts: { note?: string; json?: boolean }) => {
        const client = await apiClientFromEnv();
        const request = await client.post<RequestView>(`/api/requests/${encodeURIComponent(id)}/decision`, {
          decision,
          ...(opts.note !== undefined ? { note: opts.note } : {}),
        });
        if (opts.json) printJson(request);
        else process.stdout.write(`request ${request.id} (${requestWhat(request)}) ${request.status}; job ${request.jobId} resumes\n`);
      });
  }
}
