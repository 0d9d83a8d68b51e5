// The floor for bench/resume-latency.ts: a workflow that waits for one signal, then runs one no-op
// activity. Signal call -> activity start on it is what the Temporal server and SDK cost by
// themselves, with no Maestro work (no database, no status projection, no prompt building).
// Bundled on its own (workflowsPath points here), so it imports nothing but @temporalio/workflow.
import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';

export interface NoopActivities {
  noop(sample: number): Promise<void>;
}

export const goSignal = defineSignal('go');

const { noop } = proxyActivities<NoopActivities>({ startToCloseTimeout: '1 minute' });

export async function noopSignalWorkflow(sample: number): Promise<void> {
  let go = false;
  setHandler(goSignal, () => {
    go = true;
  });
  await condition(() => go);
  await noop(sample);
}
