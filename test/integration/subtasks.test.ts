// Subtasks on the real dev server: SpinOffTask starts child workflows, WaitSubTask parks the parent
// (waiting_subtasks) until they end, the parent's resumed movement sees their summaries, and a re-run
// of the spawning movement spawns nothing new. Toward another workspace a spawn waits for approval.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createApiApp } from '../../api/app.js';
import { workflowIdForJob } from '../../core/types.js';
import { getJob, listEvents, listJobs, listMovementRuns, listRequests } from '../../db/repositories/index.js';
import { currentMovementOf } from '../../dev/movement-script.js';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const PIECE = `
name: fanout
initial_movement: work
max_movements: 10
system_prompt: You split work into subtasks.
movements:
  - name: work
    instruction: Start the subtasks, wait for them, then complete.
    allowed_tools: [SpinOffTask]
    rules: []
    default_next: COMPLETE
`;

const call = (name: string, args: Record<string, unknown> = {}): ScriptedResponse => ({ toolCalls: [{ name, arguments: args }] });
const complete = (summary: string): ScriptedResponse => call('complete', { status: 'done', summary });

type Msg = { role: string; content?: unknown };
const messagesOf = (req: RecordedRequest) => (req.body.messages ?? []) as Msg[];
const firstUser = (req: RecordedRequest) => String(messagesOf(req).find((m) => m.role === 'user')?.content ?? '');
/** The job's instruction, from the "## Task" section only (a parent's prompt also lists its children). */
const taskOf = (req: RecordedRequest) => /## Task\n([\s\S]*?)\n\n## /.exec(firstUser(req))?.[1] ?? '';
const turnOf = (req: RecordedRequest) => messagesOf(req).filter((m) => m.role === 'assistant').length;
const toolResults = (req: RecordedRequest) => messagesOf(req).filter((m) => m.role === 'tool').map((m) => String(m.content));

/** Parents play their steps per movement run (a resumed run starts from step 0 again). */
const PARENT_STEPS: Record<string, ScriptedResponse[]> = {};
/** Children answer once the gate opens, so the parent is surely parked before they end. */
let gate: Promise<void> = Promise.resolve();
let openGate: () => void = () => {};

async function handler(req: RecordedRequest): Promise<ScriptedResponse> {
  const task = taskOf(req);
  const child = /^child task (\w+)/.exec(task);
  if (child) {
    await gate;
    return complete(`${child[1]} result: ${child[1].length * 11}`);
  }
  const steps = PARENT_STEPS[task];
  if (!steps || currentMovementOf(req) !== 'work') return { content: `nothing scripted for "${task}"` };
  return steps[Math.min(turnOf(req), steps.length - 1)];
}

describe('subtasks', () => {
  let stack: TestStack;
  let app: ReturnType<typeof createApiApp>;
  before(async () => {
    stack = await startTestStack({ script: handler });
    app = createApiApp({ db: stack.db, client: stack.client, config: stack.config });
  });
  after(async () => stack?.stop());

  const firstRequestsOf = (task: string) => stack.llm.requests.filter((r) => taskOf(r) === task && turnOf(r) === 0);

  test('two subtasks, WaitSubTask parks the parent, it resumes with both summaries and spawns nothing new', async () => {
    const task = 'fan out the counting';
    PARENT_STEPS[task] = [
      call('SpinOffTask', { instruction: 'child task alpha', piece: 'chat' }),
      call('SpinOffTask', { instruction: 'child task beta', piece: 'chat' }),
      call('WaitSubTask'),
      complete('parent done'),
    ];
    gate = new Promise((resolve) => (openGate = resolve));
    const parent = await stack.submit({ pieceYaml: PIECE, instruction: task });

    const parked = await waitFor(async () => {
      const row = await getJob(stack.db, parent.id);
      return row?.status === 'waiting_subtasks' && row;
    }, { timeoutMs: 20_000, message: 'parent parks waiting_subtasks' });
    assert.equal(parked.waitReason, 'subtasks');
    assert.equal(parked.resumeMovement, 'work');

    const children = await listJobs(stack.db, { parentId: parent.id });
    assert.deepEqual(children.map((c) => c.instruction).sort(), ['child task alpha', 'child task beta']);
    for (const c of children) {
      assert.equal(c.parentId, parent.id);
      assert.equal(c.piece, 'chat');
      // A Temporal child workflow of the parent (the UI shows it as one).
      const desc = await waitFor(() => stack.client.workflow.getHandle(workflowIdForJob(c.id)).describe(), { message: `child ${c.id} started` });
      assert.equal(desc.parentExecution?.workflowId, workflowIdForJob(parent.id));
    }
    openGate();

    const { result, job } = await stack.finish(parent.id);
    assert.equal(result?.status, 'completed');
    assert.equal(job.summary, 'parent done');
    const ended = await listJobs(stack.db, { parentId: parent.id });
    assert.equal(ended.length, 2, 're-running the spawning movement started no new child');
    for (const c of ended) assert.equal(c.status, 'completed');

    const runs = await listMovementRuns(stack.db, parent.id);
    assert.deepEqual(runs.map((r) => [r.movement, r.next]), [['work', 'WAIT_SUBTASKS'], ['work', 'COMPLETE']]);

    // The resumed movement's first prompt lists both children with status and summary.
    const [, resumed] = firstRequestsOf(task);
    assert.ok(resumed, 'the work movement ran a second time');
    const prompt = firstUser(resumed);
    assert.match(prompt, /## Subtasks\n/);
    for (const [name, result] of [['alpha', 'alpha result: 55'], ['beta', 'beta result: 44']]) {
      const child = ended.find((c) => c.instruction === `child task ${name}`);
      assert.ok(prompt.includes(`- job ${child?.id} [completed] child task ${name}\n  summary: ${result}`), `prompt lists ${name}: ${prompt}`);
    }
    // In the re-run the same SpinOffTask calls found their children, and WaitSubTask answered at once.
    const last = stack.llm.requests.filter((r) => taskOf(r) === task).at(-1);
    assert.ok(last);
    const results = toolResults(last);
    assert.equal(results.filter((r) => r.startsWith('already started as job')).length, 2, results.join('\n'));
    assert.match(results[2], /^All 2 subtasks have ended/);
    const parks = (await listEvents(stack.db, parent.id)).filter((e) => e.type === 'job.status' && e.data.status === 'waiting_subtasks');
    assert.equal(parks.length, 1, 'one park');
  });

  test('a spawn toward another workspace waits for approval, then starts there once', async () => {
    const task = 'fan out elsewhere';
    const other = path.join(stack.home, 'workspaces', 'other-project');
    PARENT_STEPS[task] = [
      call('SpinOffTask', { instruction: 'child task gamma', piece: 'chat', workspace: other }),
      call('WaitSubTask'),
      complete('parent done elsewhere'),
    ];
    gate = Promise.resolve();
    const parent = await stack.submit({ pieceYaml: PIECE, instruction: task });
    const parked = await waitFor(async () => {
      const row = await getJob(stack.db, parent.id);
      return row?.status === 'waiting_human' && row;
    }, { timeoutMs: 20_000, message: 'parent parks waiting_human' });
    assert.equal(parked.waitReason, 'spawn_request');
    assert.equal((await listJobs(stack.db, { parentId: parent.id })).length, 0, 'nothing spawned before approval');
    const [request] = await listRequests(stack.db, parent.id);
    assert.equal(request.kind, 'spawn');
    assert.equal(request.status, 'pending');
    assert.deepEqual(request.args, { instruction: 'child task gamma', piece: 'chat', workspace: other });

    const res = await app.request(`/api/requests/${request.id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approved', note: 'go ahead' }),
    });
    assert.equal(res.status, 200, await res.clone().text());

    const { result } = await stack.finish(parent.id);
    assert.equal(result?.status, 'completed');
    const children = await listJobs(stack.db, { parentId: parent.id });
    assert.equal(children.length, 1);
    assert.equal(children[0].workspace, other);
    assert.equal(children[0].status, 'completed');
    await fs.access(path.join(other, 'output'));
    assert.equal((await listRequests(stack.db, parent.id)).length, 1, 'no second request');
  });

  test('a declined spawn is not asked again: the re-run is told so and goes on', async () => {
    const task = 'fan out where declined';
    PARENT_STEPS[task] = [
      call('SpinOffTask', { instruction: 'child task delta', workspace: '../declined-project' }),
      complete('did it myself'),
    ];
    const parent = await stack.submit({ pieceYaml: PIECE, instruction: task });
    const request = await waitFor(async () => (await listRequests(stack.db, parent.id))[0], { timeoutMs: 20_000, message: 'spawn request' });
    await waitFor(async () => (await getJob(stack.db, parent.id))?.waitReason === 'spawn_request', { message: 'parked on it' });
    const res = await app.request(`/api/requests/${request.id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'declined', note: 'not that repo' }),
    });
    assert.equal(res.status, 200, await res.clone().text());

    const { result } = await stack.finish(parent.id);
    assert.equal(result?.status, 'completed');
    assert.equal((await listJobs(stack.db, { parentId: parent.id })).length, 0);
    const last = stack.llm.requests.filter((r) => taskOf(r) === task).at(-1);
    assert.ok(last);
    assert.match(toolResults(last)[0], /declined.*note: not that repo/);
    const parks = (await listEvents(stack.db, parent.id)).filter((e) => e.type === 'job.status' && e.data.status === 'waiting_human');
    assert.equal(parks.length, 1, 'parked once');
  });
});
