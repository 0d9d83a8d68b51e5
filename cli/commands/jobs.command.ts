// `maestro jobs`: list jobs, newest first; `--waiting`: the parked ones, longest waiting first,
// with what each waits for and the movement it resumes.
import type { Command } from 'commander';
import { JOB_STATUSES } from '../../core/types.js';
import { apiClientFromEnv, type ApiJob } from '../api-client.js';
import { CliError, formatJobsTable, oneLine, printJson, table } from '../format.js';

export function registerJobsCommand(program: Command): void {
  program
    .command('jobs')
    .description('list jobs, newest first')
    .option('-s, --status <statuses>', `comma-separated: ${JOB_STATUSES.join(', ')}`)
    .option('-w, --waiting', 'only parked jobs: what each waits for, where it resumes, and for how long')
    .option('-n, --limit <n>', 'at most this many', '50')
    .option('--json', 'print the jobs as a JSON array')
    .action(async (opts: { status?: string; waiting?: boolean; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new CliError('--limit must be an integer from 1 to 500', 2);
      const status = opts.status?.split(',').map((s) => s.trim()).filter(Boolean);
      const unknown = status?.filter((s) => !(JOB_STATUSES as readonly string[]).includes(s)) ?? [];
      if (unknown.length) throw new CliError(`unknown status ${unknown.join(', ')} (one of ${JOB_STATUSES.join(', ')})`, 2);
      const client = await apiClientFromEnv();
      if (opts.waiting) {
        const q = new URLSearchParams({ waiting: 'true', limit: String(limit) });
        if (status?.length) q.set('status', status.join(','));
        const { jobs } = await client.get<{ jobs: ApiJob[] }>(`/api/jobs?${q}`);
        const longestFirst = [...jobs].sort((a, b) => Date.parse(a.updatedAt) - Date.parse(b.updatedAt));
        if (opts.json) printJson(longestFirst);
        else process.stdout.write(`${formatWaitingTable(longestFirst)}\n`);
        return;
      }
      const jobs = await client.listJobs({ status, limit });
      if (opts.json) printJson(jobs);
      else process.stdout.write(`${formatJobsTable(jobs)}\n`);
    });
}

/**
 * One row per parked job. The row's updated_at is written when the park is recorded and nothing
 * touches the row while the job waits, so it is when the wait began.
 */
export function formatWaitingTable(jobs: ApiJob[], now = Date.now()): string {
  if (jobs.length === 0) return 'no waiting jobs';
  return table(
    ['ID', 'STATUS', 'WAITS FOR', 'RESUMES AT', 'WAITING', 'PIECE', 'INSTRUCTION'],
    jobs.map((j) => [
      j.id,
      j.status,
      j.waitReason ?? '-',
      j.resumeMovement ?? '-',
      waitedFor(j.updatedAt, now),
      j.piece,
      oneLine(j.instruction, 40),
    ]),
  );
}

/** "42s", "5m 03s", "2h 07m", "3d 04h": how long a job has waited. */
export function waitedFor(sinceIso: string, now = Date.now()): string {
  const since = Date.parse(sinceIso);
  if (Number.isNaN(since)) return '-';
  const s = Math.max(0, Math.floor((now - since) / 1000));
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86_400)}d ${pad(Math.floor(s / 3600) % 24)}h`;
}
