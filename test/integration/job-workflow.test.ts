// A job end to end on the real Temporal dev server, real Postgres protocol and the scripted model
// over real HTTP: movements as activities, rules, max_movements, invalid transitions, the job row.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import proto, { type temporal } from '@temporalio/proto';
import { listMovementRuns } from '../../db/repositories/index.js';
import { comparePrefix, differenceAfterJobContext } from '../../bench/prompt-prefix.js';
import { currentMovementOf, scriptByMovement } from '../../dev/movement-script.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';

const EventType = proto.temporal.api.enums.v1.EventType;

const transition = (next: string, summary = `go to ${next}`) => ({ toolCalls: [{ name: 'transition', arguments: { next, summary } }] });
const complete = (summary: string) => ({ toolCalls: [{ name: 'complete', arguments: { status: 'done', summary } }] });

describe('job workflow', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({
      script: scriptByMovement({
        plan: [{ toolCalls: [{ name: 'Glob', arguments: { pattern: '**/*' } }] }, transition('implement', 'planned')],
        implement: [
          { toolCalls: [{ name: 'Write', arguments: { path: 'output/hello.txt', content: 'hello\n' } }] },
          transition('review', 'implemented'),
        ],
        review: [complete('reviewed and done')],
      }),
    });
  });
  after(async () => stack?.stop());

  test('a 3-movement job completes with exactly one movement activity per movement', async () => {
    const job = await stack.submit({ piece: 'develop', instruction: 'write hello' });
    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    assert.equal(result?.movementCount, 3);

    const history = await stack.client.workflow.getHandle(row.workflowId).fetchHistory();
    const scheduled = (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    const movements = scheduled.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runMovement');
    assert.equal(movements.length, 3, 'one runMovement activity per movement');
    const summaries = movements.map((e) => summaryOf(e));
    assert.deepEqual(
      summaries.map((s) => s.split(' ')[0]),
      ['plan', 'implement', 'review'],
      `activity summaries name the movements: ${summaries.join(' | ')}`,
    );

    // The job row is the workflow's final state, projected into Postgres.
    assert.equal(row.status, 'completed');
    assert.equal(row.movementCount, 3);
    assert.equal(row.currentMovement, 'review');
    assert.equal(row.summary, 'reviewed and done');
    assert.ok(row.finishedAt, 'finished_at is set');
    const runs = await listMovementRuns(stack.db, job.id);
    assert.deepEqual(runs.map((r) => [r.movement, r.status, r.next]), [
      ['plan', 'completed', 'implement'],
      ['implement', 'completed', 'review'],
      ['review', 'completed', 'COMPLETE'],
    ]);
    assert.ok(runs.every((r) => r.totalTokens > 0), 'token usage is recorded per run');
    assert.equal(await readFile(path.join(row.workspace, 'output/hello.txt'), 'utf8'), 'hello\n');
  });

  test('prompt-cache stability: same system prompt and tools, append-only within movements', async () => {
    const job = await stack.submit({ piece: 'develop', instruction: 'write hello again' });
    await stack.finish(job.id);
    const mine = stack.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes('write hello again'));
    assert.ok(mine.length >= 5);
    const first = mine[0].body;
    for (const r of mine) {
      assert.equal(JSON.stringify(r.body.tools), JSON.stringify(first.tools), 'tools array byte-identical');
      assert.equal(JSON.stringify(r.body.messages[0]), JSON.stringify(first.messages[0]), 'system prompt byte-identical');
    }
    // Within a movement each request extends the previous one; after a transition the first
    // difference falls after the system prompt, the tools and the job-level context.
    for (let i = 1; i < mine.length; i += 1) {
      const cmp = comparePrefix(mine[i - 1].body, mine[i].body);
      if (currentMovementOf(mine[i - 1]) === currentMovementOf(mine[i])) {
        assert.ok(cmp.appendOnly, `request ${i + 1} is append-only (first difference: ${cmp.firstDifference})`);
      } else {
        assert.ok(differenceAfterJobContext(cmp.firstDifference), `after a transition the prefix broke at ${cmp.firstDifference}`);
      }
    }
  });
});

describe('job workflow guards', () => {
  test('a review -> implement loop ends aborted at max_movements', async () => {
    const stack = await startTestStack({
      script: scriptByMovement({
        plan: [transition('implement')],
        implement: [transition('review')],
        review: [transition('implement', 'not good yet')],
      }),
    });
    try {
      const pieceYaml = (await readFile('pieces/develop.yaml', 'utf8')).replace(/max_movements: \d+/, 'max_movements: 5');
      const job = await stack.submit({ pieceYaml, instruction: 'loop forever' });
      const { result, job: row } = await stack.finish(job.id);
      assert.equal(result?.status, 'aborted');
      assert.equal(result?.reason, 'max_movements');
      assert.equal(row.status, 'aborted');
      assert.equal(row.reason, 'max_movements');
      assert.equal(row.movementCount, 5);
    } finally {
      await stack.stop();
    }
  });

  test('an invalid transition target gets an error tool result and the second try succeeds', async () => {
    const stack = await startTestStack({
      script: scriptByMovement({
        plan: [transition('review'), transition('implement')],
        implement: [transition('review')],
        review: [complete('done')],
      }),
    });
    try {
      const job = await stack.submit({ piece: 'develop', instruction: 'try a wrong step' });
      const { result } = await stack.finish(job.id);
      assert.equal(result?.status, 'completed');
      const retry = stack.llm.requests[1].body.messages as Array<{ role: string; content: string }>;
      const toolResult = retry.find((m) => m.role === 'tool');
      assert.ok(toolResult, 'the invalid call was answered with a tool result');
      assert.match(toolResult.content, /"review" is not a valid next step from "plan"/);
      assert.match(toolResult.content, /Valid choices: "implement"/);
      const runs = await listMovementRuns(stack.db, job.id);
      assert.equal(runs[0].next, 'implement');
    } finally {
      await stack.stop();
    }
  });
});

describe('LLM errors', () => {
  test('401 fails the job at once, non-retryable, with its reason on the job', async () => {
    const stack = await startTestStack({
      script: [{ status: 401, errorBody: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } }],
    });
    try {
      const job = await stack.submit({ piece: 'develop', instruction: 'no key' });
      const { failure, job: row } = await stack.finish(job.id);
      assert.ok(failure, 'the workflow failed');
      assert.equal(row.status, 'failed');
      assert.match(row.reason ?? '', /LLM endpoint answered 401: .*Incorrect API key provided/);
      assert.equal(stack.llm.requests.length, 1, 'a 401 is not retried, neither by the client nor by Temporal');
      assert.equal(stack.llm.requests[0].headers.authorization, 'Bearer test-key', 'the key reaches the LLM');
      const history = await stack.client.workflow.getHandle(row.workflowId).fetchHistory();
      const text = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
      assert.match(text, /Incorrect API key provided/, 'payloads are decoded for the search');
      assert.ok(!text.includes('test-key'), 'the API key never enters workflow history');
    } finally {
      await stack.stop();
    }
  });
});

function summaryOf(event: temporal.api.history.v1.IHistoryEvent): string {
  const data = event.userMetadata?.summary?.data;
  return data ? JSON.parse(Buffer.from(data).toString('utf8')) : '';
}
