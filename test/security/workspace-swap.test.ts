// A job spins off a subtask into a folder of its own workspace, then swaps that folder for a symlink
// to MAESTRO_HOME (which holds the API token and the database). The subtask must run nothing there:
// each sandbox binds the verified directory, not the path, and each movement checks the path still
// leads where the workspace was created.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { getJob } from '../../db/repositories/index.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const SECRET = `HOME-SECRET-${randomUUID()}`;
let stack: TestStack;
let swapped: () => void;
let parentRuns = 0;
const swapDone = new Promise<void>((resolve) => (swapped = resolve));

const PIECE = `name: swap
initial_movement: work
system_prompt: You are a test agent.
movements:
  - name: work
    instruction: Do the task.
    allowed_tools: [Bash, SpinOffTask]
`;

const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({ toolCalls: [{ name, arguments: args }] });
const turnOf = (req: RecordedRequest) => (req.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
const isChild = (req: RecordedRequest) =>
  String((req.body.messages as Array<{ role: string; content?: unknown }>).find((m) => m.role === 'user')?.content ?? '').includes('CHILD-TASK');

async function model(req: RecordedRequest): Promise<ScriptedResponse> {
  const turn = turnOf(req);
  if (isChild(req)) {
    if (turn === 0) {
      await swapDone;
      return call('Bash', { command: 'cat home-secret.txt api-token 2>&1; ls; touch child-was-here' });
    }
    return call('complete', { status: 'done', summary: 'child done' });
  }
  // The parent's movement runs twice: before WaitSubTask parks it, and once the subtask has ended.
  if (turn === 0) parentRuns++;
  const resumed = parentRuns > 1;
  if (turn === 0 && !resumed) return call('SpinOffTask', { instruction: 'CHILD-TASK read the files', workspace: 'sub' });
  if (turn === 1 && !resumed) return call('Bash', { command: `rm -rf sub && ln -s ${stack.home} sub && echo swapped` });
  if (turn === 2 && !resumed) {
    swapped();
    return call('WaitSubTask', {});
  }
  return call('complete', { status: 'done', summary: 'parent done' });
}

before(async () => {
  stack = await startTestStack({ script: (req) => model(req) });
  await fs.writeFile(path.join(stack.home, 'home-secret.txt'), SECRET);
});
after(async () => {
  swapped?.();
  await stack?.stop();
});

test('a subtask whose workspace was swapped for a symlink runs nothing behind it', async () => {
  const parent = await stack.submit({ pieceYaml: PIECE, instruction: 'spawn and swap' });
  const child = await waitFor(async () => {
    const rows = await stack.db.selectFrom('jobs').select(['id']).where('parent_id', '=', parent.id).execute();
    return rows[0];
  }, { timeoutMs: 60_000 });
  const childEnd = { job: await waitFor(async () => {
    const row = await getJob(stack.db, child.id);
    return row && ['completed', 'failed', 'aborted', 'cancelled'].includes(row.status) ? row : undefined;
  }, { timeoutMs: 60_000 }) };
  const seen = JSON.stringify(stack.llm.requests.map((r) => r.body.messages.filter((m: { role: string }) => m.role !== 'assistant')));
  assert.ok(!seen.includes(SECRET), 'the subtask never read MAESTRO_HOME');
  await assert.rejects(fs.stat(path.join(stack.home, 'child-was-here')), 'nothing ran in MAESTRO_HOME');
  await assert.rejects(fs.stat(path.join(stack.home, 'input')), 'no workspace layout was made through the link');
  // Either its movement refused to start, or its Bash refused to run: both say why.
  const refusedMovement = /now leads to/.test(childEnd.job.reason ?? '');
  const refusedBash = /Bash cannot run on this worker: the job workspace .* (cannot be opened as a directory|now leads to)/.test(seen);
  const parentRow = await getJob(stack.db, parent.id);
  const events = await stack.db.selectFrom('job_events').select(['job_id', 'type', 'data']).where('job_id', 'in', [parent.id, child.id]).where('type', 'in', ['tool.call', 'job.status', 'movement.finished']).execute().catch((e: Error) => e.message);
  assert.ok(refusedMovement || refusedBash, `child ended ${childEnd.job.status}: ${childEnd.job.reason}; parent ${parentRow?.status} ${parentRow?.reason}; ${JSON.stringify(events).slice(0, 3000)}`);
  const { result } = await stack.finish(parent.id);
  assert.equal(result?.status, 'completed');
});
