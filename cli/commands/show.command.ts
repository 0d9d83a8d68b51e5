// `maestro show ID`: one job with its movements and last comments.
import type { Command } from 'commander';
import { apiClientFromEnv } from '../api-client.js';
import { formatJobDetail, printJson } from '../format.js';

export function registerShowCommand(program: Command): void {
  program
    .command('show')
    .description('show a job, its movements and its last comments')
    .argument('<id>', 'job id')
    .option('--json', 'print {...job, movements, comments} as JSON')
    .action(async (id: string, opts: { json?: boolean }) => {
      const client = await apiClientFromEnv();
      const [job, comments] = await Promise.all([client.getJob(id), client.listComments(id)]);
      if (opts.json) printJson({ ...job, comments });
      else process.stdout.write(`${formatJobDetail(job, comments)}\n`);
    });
}
