// Browser waits on the real dev server: a browser tool parks the job (WAITING_HUMAN_BROWSER with
// browser_login or captcha); POST /api/jobs/:id/browser/resolved resumes one job, and
// POST /api/captcha-pool/resolve resumes every job stopped at the captcha screen of one space.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiApp } from '../../api/app.js';
import type { JobView } from '../../core/types.js';
import { getJob, listCaptchaWaiters, listMovementRuns } from '../../db/repositories/index.js';
import { testBrowserTool } from '../fixtures/browser-test.tool.js';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const PIECE = `
name: browse
initial_movement: browse
system_prompt: You use a browser.
movements:
  - name: browse
    instruction: Use the browser, then complete.
    allowed_tools: [BrowseWeb]
    rules: []
    default_next: COMPLETE
`;

type Msg = { role: string; content?: unknown };
const messagesOf = (req: RecordedRequest) => (req.body.messages ?? []) as Msg[];
const taskOf = (req: RecordedRequest) =>
  /## Task\n([\s\S]*?)\n\n## /.exec(String(messagesOf(req).find((m) => m.role === 'user')?.content ?? ''))?.[1] ?? '';

/**
 * The first run of a job's movement hits the wait the instruction names ("login", or "captcha in
 * SPACE"); once a person resolved it, the movement runs again and completes.
 */
function browserModel() {
  const runs = new Map<string, number>();
  return (req: RecordedRequest): ScriptedResponse => {
    const task = taskOf(req);
    const turn = messagesOf(req).filter((m) => m.role === 'assistant').length;
    if (turn === 0) runs.set(task, (runs.get(task) ?? 0) + 1);
    if ((runs.get(task) ?? 0) > 1) return { toolCalls: [{ name: 'complete', arguments: { status: 'done', summary: `${task}: done` } }] };
    const space = /captcha in (\S+)/.exec(task)?.[1];
    const args = space ? { action: 'captcha', spaceId: space } : { action: 'login', url: 'https://portal.test/login' };
    return { toolCalls: [{ name: 'BrowseWeb', arguments: args }] };
  };
}

describe('browser waits', () => {
  let stack: TestStack;
  let app: ReturnType<typeof createApiApp>;
  before(async () => {
    stack = await startTestStack({ script: browserModel(), extraTools: [testBrowserTool] });
    app = createApiApp({ db: stack.db, client: stack.client, config: stack.config });
  });
  after(async () => stack?.stop());

  const post = (url: string, body?: unknown) =>
    app.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const parkedOn = (id: string, waitReason: string) =>
    waitFor(async () => {
      const row = await getJob(stack.db, id);
      return row?.status === 'waiting_human' && row.waitReason === waitReason && row;
    }, { timeoutMs: 20_000, message: `job ${id} parks on ${waitReason}` });
  const captchaSpaceOf = async (id: string) =>
    (await stack.db.selectFrom('jobs').select('captcha_space_id').where('id', '=', id).executeTakeFirstOrThrow()).captcha_space_id;

  test('a login wait parks the job; /browser/resolved resumes the same movement', async () => {
    const job = await stack.submit({ pieceYaml: PIECE, instruction: 'read the portal after login' });
    const parked = await parkedOn(job.id, 'browser_login');
    assert.equal(parked.resumeMovement, 'browse');
    const desc = await stack.client.workflow.getHandle(parked.workflowId).describe();
    assert.equal(desc.searchAttributes.MaestroWaitReason?.[0], 'browser_login');

    const res = await post(`/api/jobs/${job.id}/browser/resolved`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { resumed: true });
    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    assert.equal(row.summary, 'read the portal after login: done');
    const runs = await listMovementRuns(stack.db, job.id);
    assert.deepEqual(runs.map((r) => [r.movement, r.next]), [['browse', 'WAITING_HUMAN_BROWSER'], ['browse', 'COMPLETE']]);

    // Not waiting any more: 409; an unknown job: 404.
    const again = await post(`/api/jobs/${job.id}/browser/resolved`);
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'not_waiting_on_browser');
    assert.equal((await post('/api/jobs/00000000-0000-4000-8000-000000000000/browser/resolved')).status, 404);
  });

  test('captcha-pool resolve wakes the 3 jobs of one space; the 4th, in another space, stays parked', async () => {
    const jobs: JobView[] = [];
    for (const [i, space] of ['space-a', 'space-a', 'space-a', 'space-b'].entries()) {
      jobs.push(await stack.submit({ pieceYaml: PIECE, instruction: `search ${i + 1}, captcha in ${space}` }));
    }
    for (const j of jobs) await parkedOn(j.id, 'captcha');
    assert.equal((await listCaptchaWaiters(stack.db, 'space-a')).length, 3);
    assert.equal(await captchaSpaceOf(jobs[3].id), 'space-b');

    // A body without a spaceId is refused.
    const bad = await post('/api/captcha-pool/resolve', {});
    assert.equal(bad.status, 400);

    const res = await post('/api/captcha-pool/resolve', { spaceId: 'space-a' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { resumed: 3 });
    for (const j of jobs.slice(0, 3)) {
      const { result } = await stack.finish(j.id);
      assert.equal(result?.status, 'completed');
      assert.equal(await captchaSpaceOf(j.id), null, 'the space is cleared once the job is woken');
    }

    // The other space's job did not move: still parked after one movement, still findable.
    const other = await getJob(stack.db, jobs[3].id);
    assert.equal(other?.status, 'waiting_human');
    assert.equal(other?.waitReason, 'captcha');
    assert.equal((await listMovementRuns(stack.db, jobs[3].id)).length, 1);
    assert.deepEqual((await listCaptchaWaiters(stack.db, 'space-b')).map((j) => j.id), [jobs[3].id]);
    // Nothing is left to wake in space-a.
    assert.deepEqual(await (await post('/api/captcha-pool/resolve', { spaceId: 'space-a' })).json(), { resumed: 0 });

    const last = await post('/api/captcha-pool/resolve', { spaceId: 'space-b' });
    assert.deepEqual(await last.json(), { resumed: 1 });
    assert.equal((await stack.finish(jobs[3].id)).result?.status, 'completed');
  });
});
