// `maestro jobs`: list jobs, newest first.
import type { Command } from 'commander';
import { JOB_STATUSES } from '../../core/types.js';
import { apiClientFromEnv } from '../api-client.js';
import { CliError, formatJobsTable, printJson } from '../format.js';

export function registerJobsCommand(program: Command): void {
  program
    .command('jobs')
    .description('list jobs, newest first')
    .option('-s, --status <statuses>', `comma-separated: ${JOB_STATUSES.join(', ')}`)
    .option('-n, --limit <n>', 'at most this many', '50')
    .option('--json', 'print the jobs as a JSON array')
    .action(async (opts: { status?: string; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new CliError('--limit must be an integer from 1 to 500', 2);
      const status = opts.status?.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = status?.filter((s) => !(JOB_STATUSES as readonly string[]).includes(s)) ?? [];
      if (unknown.length) throw new CliError(`unknown status ${unknown.join(', ')} (one of ${JOB_STATUSES.join(', ')})`, 2);
      const jobs = await (await apiClientFromEnv()).listJobs({ status, limit });
      if (opts.json) printJson(jobs);
      else process.stdout.write(`${formatJobsTable(jobs)}\n`);
    });
}
