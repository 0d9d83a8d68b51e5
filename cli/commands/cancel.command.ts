// `maestro cancel ID`: Temporal cancellation through the API. A running movement stops at its next
// heartbeat; a parked job ends at once. --wait follows the job until its status is final.
import type { Command } from 'commander';
import { TERMINAL_STATUSES, type JobStatus } from '../../core/types.js';
import { apiClientFromEnv, type ApiClient, type ApiJob } from '../api-client.js';
import { CliError, formatFinalJob, printJson } from '../format.js';

const POLL_MS = 300;

export function registerCancelCommand(program: Command): void {
  program
    .command('cancel')
    .description('cancel a job (a running movement stops, a parked job ends at once)')
    .argument('<id>', 'job id')
    .option('--wait', 'wait until the job has ended and print its final status')
    .option('--timeout <seconds>', 'with --wait: give up after this long', '60')
    .option('--json', 'print the job as JSON (the final job with --wait)')
    .action(async (id: string, opts: { wait?: boolean; timeout: string; json?: boolean }) => {
      const timeoutS = Number(opts.timeout);
      if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new CliError('--timeout must be a positive number of seconds', 2);
      const client = await apiClientFromEnv();
      const accepted = await client.post<ApiJob & { cancelRequested: true }>(`/api/jobs/${encodeURIComponent(id)}/cancel`, {});
      if (!opts.wait) {
        if (opts.json) printJson(accepted);
        else process.stdout.write(`cancellation requested for job ${accepted.id} (was ${accepted.status})\n`);
        return;
      }
      const final = await waitForEnd(client, accepted.id, timeoutS * 1000);
      if (opts.json) printJson(final);
      else process.stdout.write(`${formatFinalJob(final)}\n`);
      if (final.status !== 'cancelled') process.exitCode = 1;
    });
}

async function waitForEnd(client: ApiClient, id: string, timeoutMs: number): Promise<ApiJob> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await client.getJob(id);
    if (TERMINAL_STATUSES.includes(job.status as JobStatus)) return job;
    if (Date.now() >= deadline) {
      throw new CliError(`job ${id} is still ${job.status} after ${timeoutMs / 1000} s (the cancellation was requested)`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
