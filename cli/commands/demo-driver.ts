// Drives the demo job like a person at the keyboard would: prints its progress, answers its
// question and grants its tool request through the HTTP API (stored first, then signalled), and
// returns once the job has ended.
import { TERMINAL_STATUSES, type JobView, type RequestView } from '../../core/types.js';
import type { ApiClient } from '../api-client.js';
import { formatFollowEvent } from '../format.js';

export interface DemoAnswers {
  reply: string;
  approvalNote: string;
}

export async function driveDemoJob(
  api: ApiClient,
  jobId: string,
  answers: DemoAnswers,
  print: (line: string) => void,
  pollMs = 250,
): Promise<JobView> {
  let after = 0;
  const handled = new Set<string>();
  const drain = async () => {
    for (const e of await api.listEvents(jobId, { after, limit: 500 })) {
      after = Math.max(after, e.id);
      const line = formatFollowEvent(e);
      if (line) print(line);
    }
  };
  for (;;) {
    await drain();
    const job = await api.get<JobView & { requests?: RequestView[] }>(`/api/jobs/${jobId}`);
    if (TERMINAL_STATUSES.includes(job.status)) {
      await drain();
      return job;
    }
    // One answer per park: the park is identified by the movement count it happened at.
    const park = `${job.movementCount}:${job.waitReason}`;
    if (job.status === 'waiting_human' && !handled.has(park)) {
      handled.add(park);
      if (job.waitReason === 'question') {
        const question = (await api.listComments(jobId)).filter((c) => c.author === 'agent').at(-1);
        print(`\n? The job asks: ${question?.body ?? '(no question found)'}`);
        await api.addComment(jobId, answers.reply);
        print(`> The demo replies: ${answers.reply}\n`);
      } else {
        for (const r of (job.requests ?? []).filter((x) => x.status === 'pending')) {
          print(`\n? The job asks for approval: ${r.kind} ${JSON.stringify(r.args)} (request ${r.id})`);
          await api.post(`/api/requests/${r.id}/decision`, { decision: 'approved', note: answers.approvalNote });
          print(`> The demo approves it: ${answers.approvalNote}\n`);
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
