// Cancel end to end: POST /api/jobs/:id/cancel and `maestro cancel` use Temporal cancellation. A
// running movement learns of it through its heartbeat and stops; a parked job ends at once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import proto from '@temporalio/proto';
import type { JobView } from '../../core/types.js';
import { getJob, listEvents, listMovementRuns } from '../../db/repositories/index.js';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { runCli, startTestApi, type TestApi } from '../helpers/api-cli.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const EventType = proto.temporal.api.enums.v1.EventType;

const PIECE = `
name: cancel-test
initial_movement: work
max_movements: 5
max_iterations: 500
system_prompt: You test cancellation.
movements:
  - name: work
    instruction: Look at the files for as long as it takes.
    allowed_tools: [Glob]
    rules: []
    default_next: COMPLETE
`;

const firstUser = (req: RecordedRequest) =>
  String((req.body.messages as Array<{ role: string; content?: unknown }>).find((m) => m.role === 'user')?.content ?? '');

describe('cancel', () => {
  let stack: TestStack;
  let api: TestApi;
  before(async () => {
    stack = await startTestStack({
      // A small heartbeat timeout makes the SDK send heartbeats often (every 0.8 x timeout at most),
      // so the cancellation reaches the running activity within seconds.
      env: { MAESTRO_HEARTBEAT_TIMEOUT: '3' },
      script: (req): ScriptedResponse => {
        if (firstUser(req).includes('[slow]')) return { delayMs: 700, toolCalls: [{ name: 'Glob', arguments: { pattern: '**/*' } }] };
        if (firstUser(req).includes('[silent]')) return { delayMs: 60_000, content: 'far too late' };
        return { toolCalls: [{ name: 'complete', arguments: { status: 'needs_user_input', summary: 'need input', question: 'Which one?' } }] };
      },
    });
    api = await startTestApi(stack);
  });
  after(async () => {
    await api?.stop();
    await stack?.stop();
  });

  const slowRequests = () => stack.llm.requests.filter((r) => firstUser(r).includes('[slow]'));

  test('cancel while running: the job ends cancelled at once and the movement activity stops', async () => {
    const job = await stack.submit({ pieceYaml: PIECE, instruction: '[slow] never finishes by itself' });
    await waitFor(() => slowRequests().length >= 2, { timeoutMs: 30_000, message: 'the movement never got going' });
    assert.equal((await getJob(stack.db, job.id))?.status, 'running');

    const asked = Date.now();
    const res = await api.call('POST', `/api/jobs/${job.id}/cancel`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.cancelRequested, true);
    assert.equal(res.body.id, job.id);

    const { result, job: row } = await stack.finish(job.id);
    const tookMs = Date.now() - asked;
    assert.equal(result?.status, 'cancelled');
    assert.equal(row.status, 'cancelled');
    assert.equal(row.reason, 'cancelled');
    assert.ok(row.finishedAt);
    assert.ok(tookMs < 5_000, `the job was cancelled ${tookMs} ms after the request`);

    // The activity hears of it at its next heartbeat and stops its LLM call and its loop.
    await waitFor(() => stack.worker!.getStatus().numInFlightActivities === 0, {
      timeoutMs: 15_000,
      message: 'the movement activity kept running after the cancellation',
    });
    const requestsAtStop = slowRequests().length;
    const history = await stack.client.workflow.getHandle(job.workflowId).fetchHistory();
    const types = (history.events ?? []).map((e) => e.eventType);
    assert.ok(types.includes(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED));
    assert.ok(types.includes(EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED), 'the movement activity was asked to cancel');
    const runs = await listMovementRuns(stack.db, job.id);
    assert.equal(runs.length, 1);
    assert.notEqual(runs[0].status, 'running', 'the cancelled movement run is not left running');
    const desc = await stack.client.workflow.getHandle(job.workflowId).describe();
    assert.deepEqual(desc.searchAttributes.MaestroStatus, ['cancelled']);
    assert.equal(slowRequests().length, requestsAtStop, 'no LLM request after the activity stopped');
  });

  test('cancel during one long silent LLM call: the activity still hears of it and stops', async () => {
    // No chunk arrives for 60 s; only the loop's heartbeats while the model is silent carry the cancel.
    const job = await stack.submit({ pieceYaml: PIECE, instruction: '[silent] think for a minute' });
    await waitFor(() => stack.llm.requests.some((r) => firstUser(r).includes('[silent]')), { timeoutMs: 30_000, message: 'no LLM call' });
    const res = await api.call('POST', `/api/jobs/${job.id}/cancel`);
    assert.equal(res.status, 202);
    const { result } = await stack.finish(job.id);
    assert.equal(result?.status, 'cancelled');
    await waitFor(
      async () => (await listMovementRuns(stack.db, job.id)).every((r) => r.status === 'cancelled'),
      { timeoutMs: 15_000, message: 'the silent LLM call was not aborted: the run stayed running' },
    );
  });

  test('cancel while parked: maestro cancel --wait ends the job cancelled at once', async () => {
    const job = await stack.submit({ pieceYaml: PIECE, instruction: '[parked] ask and wait' });
    await waitFor(async () => (await getJob(stack.db, job.id))?.status === 'waiting_human', { timeoutMs: 30_000, message: 'never parked' });

    const out = await runCli(api.url, ['cancel', job.id, '--wait', '--timeout', '20']);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, new RegExp(`job ${job.id} cancelled`));
    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'cancelled');
    assert.equal(row.status, 'cancelled');
    assert.equal(row.waitReason, null, 'the wait reason is cleared');
    const desc = await stack.client.workflow.getHandle(job.workflowId).describe();
    assert.deepEqual(desc.searchAttributes.MaestroStatus, ['cancelled']);
    assert.ok(!desc.searchAttributes.MaestroWaitReason?.length, 'MaestroWaitReason is cleared');
    const statuses = (await listEvents(stack.db, job.id)).filter((e) => e.type === 'job.status').map((e) => e.data.status);
    assert.deepEqual(statuses, ['running', 'waiting_human', 'cancelled'], 'no movement ran after the park');
  });

  test('a finished job cannot be cancelled (409), an unknown one is 404', async () => {
    const job = await stack.submit({ pieceYaml: PIECE, instruction: '[parked] to be cancelled twice' });
    await waitFor(async () => (await getJob(stack.db, job.id))?.status === 'waiting_human', { timeoutMs: 30_000, message: 'never parked' });
    assert.equal((await api.call('POST', `/api/jobs/${job.id}/cancel`)).status, 202);
    await stack.finish(job.id);

    const again = await api.call('POST', `/api/jobs/${job.id}/cancel`);
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'job_finished');
    const cli = await runCli(api.url, ['cancel', job.id]);
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /already ended \(cancelled\) \(409 job_finished\)/);
    const unknown = await api.call('POST', `/api/jobs/${randomUUID()}/cancel`);
    assert.equal(unknown.status, 404);
    assert.equal(((await getJob(stack.db, job.id)) as JobView).status, 'cancelled');
  });
});
