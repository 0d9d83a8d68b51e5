// ASK end to end on the real dev server: complete(needs_user_input) parks the job on a question, a
// reply (stored, then signalled) resumes the same movement with the reply among its last 5 comments;
// the ask limit deflects and then aborts; late replies and stray decisions never fail the workflow.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import proto from '@temporalio/proto';
import type { JobView } from '../../core/types.js';
import { getJob, listComments, listEvents, listMovementRuns } from '../../db/repositories/index.js';
import { decisionSignal, jobStateQuery } from '../../core/job-workflow-contract.js';
import { currentMovementOf } from '../../dev/movement-script.js';
import type { RecordedRequest, ScriptedResponse, ScriptHandler } from '../../dev/scripted-llm-server.js';
import { runCli, startTestApi, type TestApi } from '../helpers/api-cli.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const EventType = proto.temporal.api.enums.v1.EventType;

const PIECE = `
name: ask-test
initial_movement: gather
max_movements: 10
system_prompt: You test questions and replies.
movements:
  - name: gather
    instruction: Look around, then move on to the work.
    allowed_tools: [Glob]
    rules:
      - condition: you know what to do
        next: work
  - name: work
    instruction: Do the work. Ask the person when you cannot decide.
    allowed_tools: [Glob]
    rules: []
    default_next: COMPLETE
`;

const transition = (next: string) => ({ toolCalls: [{ name: 'transition', arguments: { next, summary: `on to ${next}` } }] });
const ask = (question: string) => ({ toolCalls: [{ name: 'complete', arguments: { status: 'needs_user_input', summary: 'need the person', question } }] });
const done = (summary: string) => ({ toolCalls: [{ name: 'complete', arguments: { status: 'done', summary } }] });

function firstUserMessage(req: RecordedRequest): string {
  const messages = (req.body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  return String(messages.find((m) => m.role === 'user')?.content ?? '');
}

/** The "## Recent comments" section of a movement's first prompt. */
function recentCommentsOf(prompt: string): string {
  return /## Recent comments[^\n]*\n([\s\S]*?)(?:\n## |$)/.exec(prompt)?.[1] ?? '';
}

const isFirstTurn = (req: RecordedRequest) => !(req.body.messages as Array<{ role: string }>).some((m) => m.role === 'assistant');

describe('ASK: questions and replies', () => {
  let stack: TestStack;
  let api: TestApi;
  // One stack for the file; each test's job carries its own tag in the instruction and gets its own script.
  const scenarios = new Map<string, ScriptHandler>();
  const requestsOf = (tag: string) => stack.llm.requests.filter((r) => firstUserMessage(r).includes(`[${tag}]`));
  const waitForStatus = (id: string, status: string, timeoutMs = 30_000) =>
    waitFor(async () => {
      const job = await getJob(stack.db, id);
      return job?.status === status ? job : undefined;
    }, {
      timeoutMs,
      message: `job ${id} never became ${status}`,
    });

  before(async () => {
    stack = await startTestStack({
      script: (req, i): ScriptedResponse | Promise<ScriptedResponse> => {
        const tag = /\[([a-z-]+)\]/.exec(firstUserMessage(req))?.[1];
        const handler = tag ? scenarios.get(tag) : undefined;
        return handler ? handler(req, i) : { content: `no scenario for ${tag}` };
      },
    });
    api = await startTestApi(stack);
  });
  after(async () => {
    await api?.stop();
    await stack?.stop();
  });

  test('a question parks waiting_human (question); maestro reply resumes the same movement with the reply in its comments', async () => {
    scenarios.set('ask-basic', (req) => {
      if (currentMovementOf(req) === 'gather') return transition('work');
      return firstUserMessage(req).includes('Blue, please') ? done('painted it blue') : ask('Which colour should it be?');
    });
    const job = await stack.submit({ pieceYaml: PIECE, instruction: '[ask-basic] paint the fence' });
    const parked = await waitForStatus(job.id, 'waiting_human');
    assert.equal(parked.waitReason, 'question');
    assert.equal(parked.resumeMovement, 'work', 'it resumes the movement that asked');
    assert.equal(parked.currentMovement, 'work');

    const comments = await listComments(stack.db, job.id);
    assert.deepEqual(comments.map((c) => [c.author, c.body]), [['agent', 'Which colour should it be?']], 'the question is a comment');

    // Visibility: search attributes, no activity held, the waiting list (API and CLI).
    const handle = stack.client.workflow.getHandle(job.workflowId);
    const desc = await handle.describe();
    assert.deepEqual(desc.searchAttributes.MaestroStatus, ['waiting_human']);
    assert.deepEqual(desc.searchAttributes.MaestroWaitReason, ['question']);
    assert.equal(desc.raw.pendingActivities?.length ?? 0, 0, 'a parked job holds no activity');
    const listed = await api.call('GET', '/api/jobs?waiting=true');
    assert.equal(listed.status, 200);
    assert.ok(listed.body.jobs.some((j: JobView) => j.id === job.id && j.waitReason === 'question'));
    const waiting = await runCli(api.url, ['jobs', '--waiting']);
    assert.equal(waiting.code, 0, waiting.stderr);
    const row = waiting.stdout.split('\n').find((l) => l.startsWith(job.id)) ?? '';
    assert.match(row, /waiting_human\s+question\s+work\s+\d+s\s+ask-test/, `maestro jobs --waiting row: ${waiting.stdout}`);

    const reply = await runCli(api.url, ['reply', job.id, 'Blue,', 'please']);
    assert.equal(reply.code, 0, reply.stderr);
    assert.match(reply.stdout, /reply stored as comment \d+ .*resumes the movement that asked/);

    const { result, job: row2 } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    assert.equal(row2.summary, 'painted it blue');
    const runs = await listMovementRuns(stack.db, job.id);
    assert.deepEqual(runs.map((r) => [r.movement, r.next]), [
      ['gather', 'work'],
      ['work', 'ASK'],
      ['work', 'COMPLETE'],
    ]);
    const workStarts = requestsOf('ask-basic').filter((r) => currentMovementOf(r) === 'work' && isFirstTurn(r));
    assert.equal(workStarts.length, 2, 'the movement ran again from its first prompt');
    const recent = recentCommentsOf(firstUserMessage(workStarts[1]));
    assert.match(recent, /agent \([^)]*\): Which colour should it be\?/);
    assert.match(recent, /user \([^)]*\): Blue, please/);
    assert.doesNotMatch(recentCommentsOf(firstUserMessage(workStarts[0])), /Blue/);

    // A reply to a finished job is kept but wakes nothing.
    const late = await runCli(api.url, ['reply', job.id, 'thanks']);
    assert.equal(late.code, 0, late.stderr);
    assert.match(late.stdout, /the job is completed, so nothing was woken/);
  });

  test('over max_asks an ASK is deflected with a note; after MAX_ASK_LIMIT_DEFLECTIONS the job ends ask_limit_reached', async () => {
    scenarios.set('ask-limit', (req) => (currentMovementOf(req) === 'gather' ? transition('work') : ask('May I ask again?')));
    const pieceYaml = PIECE.replace('max_movements: 10', 'max_movements: 10\nmax_asks: 1');
    const job = await stack.submit({ pieceYaml, instruction: '[ask-limit] keep asking' });
    await waitForStatus(job.id, 'waiting_human');
    const posted = await api.call('POST', `/api/jobs/${job.id}/comments`, { body: 'Decide yourself.' });
    assert.equal(posted.status, 201);
    assert.equal(posted.body.signalled, true);

    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'aborted');
    assert.equal(row.status, 'aborted');
    assert.equal(row.reason, 'ask_limit_reached');
    const runs = await listMovementRuns(stack.db, job.id);
    assert.deepEqual(runs.map((r) => [r.movement, r.next]), [
      ['gather', 'work'],
      ['work', 'ASK'], // 1st ask: parks
      ['work', 'ASK'], // 2nd: over max_asks 1, deflected
      ['work', 'ASK'], // 3rd: deflected again (2 of MAX_ASK_LIMIT_DEFLECTIONS)
      ['work', 'ASK'], // 4th: ask_limit_reached
    ]);
    const events = await listEvents(stack.db, job.id);
    const parks = events.filter((e) => e.type === 'job.status' && e.data.status === 'waiting_human');
    assert.equal(parks.length, 1, 'only the first ASK parked');

    const prompts = requestsOf('ask-limit').filter((r) => currentMovementOf(r) === 'work' && isFirstTurn(r)).map(firstUserMessage);
    assert.equal(prompts.length, 4);
    assert.ok(!prompts[0].includes('## Note from the engine') && !prompts[1].includes('## Note from the engine'));
    for (const p of prompts.slice(2)) {
      assert.match(p, /## Note from the engine\n.*limit for this job\. Do not ask again: decide by yourself/);
    }
  });

  test('a reply to a running job reaches the next movement; stray decisions are ignored, no workflow task fails', async () => {
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    scenarios.set('ask-late', async (req) => {
      if (currentMovementOf(req) === 'gather') {
        await gate; // the job stays running in its first movement until the test has replied
        return transition('work');
      }
      return firstUserMessage(req).includes('Go ahead') ? done('went ahead') : ask('Shall I go ahead?');
    });
    const job = await stack.submit({ pieceYaml: PIECE, instruction: '[ask-late] do it' });
    const handle = stack.client.workflow.getHandle(job.workflowId);
    await waitFor(() => requestsOf('ask-late').length >= 1, { timeoutMs: 30_000, message: 'first LLM call never came' });
    assert.equal((await getJob(stack.db, job.id))?.status, 'running');

    const early = await api.call('POST', `/api/jobs/${job.id}/comments`, { body: 'Mind the paint is wet.' });
    assert.equal(early.status, 201);
    assert.equal(early.body.signalled, true, 'a running job is signalled too (it ignores the reply)');
    await handle.signal(decisionSignal, { requestId: randomUUID() });
    openGate();

    await waitForStatus(job.id, 'waiting_human');
    const firstWork = requestsOf('ask-late').find((r) => currentMovementOf(r) === 'work')!;
    assert.match(recentCommentsOf(firstUserMessage(firstWork)), /user \([^)]*\): Mind the paint is wet\./);

    // The earlier reply did not count as the answer, and a decision for no request wakes nothing.
    await handle.signal(decisionSignal, { requestId: randomUUID() });
    const state = await handle.query(jobStateQuery);
    assert.equal(state.status, 'waiting_human');
    assert.equal(state.waitReason, 'question');

    await api.call('POST', `/api/jobs/${job.id}/comments`, { body: 'Go ahead.' });
    const { result } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    const runs = await listMovementRuns(stack.db, job.id);
    assert.deepEqual(runs.map((r) => r.next), ['work', 'ASK', 'COMPLETE']);

    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    assert.equal(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length, 0, 'no workflow task failed');
    const signals = events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName);
    assert.deepEqual(signals, ['reply', 'decision', 'decision', 'reply']);
  });
});
