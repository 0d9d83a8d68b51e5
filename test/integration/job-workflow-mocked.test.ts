// The job workflow's own decisions, with its activities mocked (as Temporal's samples test
// workflows): the ask limit and its deflections, approval expiry by a timer, and max_movements.
// The workflow code is the real bundle on the run's dev server; no database, no model.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_ASK_LIMIT_DEFLECTIONS } from '../../core/types.js';
import { replySignal, type JobWorkflowResult } from '../../core/job-workflow-contract.js';
import { mockedPiece as pieceWith, freshMocks as fresh, startMockedJobWorker, type MockedJobWorker, type Mocks } from '../helpers/mocked-job-worker.js';
import { waitFor } from '../helpers/wait-for.js';

describe('job workflow with mocked activities', () => {
  let mocked: MockedJobWorker;
  before(async () => {
    mocked = await startMockedJobWorker();
  });
  after(async () => {
    await mocked?.stop();
  });
  const start = (m: Mocks) => mocked.start(m);

  it('over the ask limit: no park, the movement runs again with a note, then aborts after the deflections', async () => {
    const m = fresh(pieceWith('max_asks: 1'), [{ next: 'ASK', summary: 'a question?' }]);
    const handle = await start(m);
    await waitFor(() => m.statuses.some((s) => s.waitReason === 'question'), { timeoutMs: 20_000 });
    await handle.signal(replySignal, { commentId: 1 });
    const result = (await handle.result()) as JobWorkflowResult;
    assert.deepEqual({ status: result.status, reason: result.reason }, { status: 'aborted', reason: 'ask_limit_reached' });
    // 1 asked and parked, 1 more over the limit, then the deflected re-runs.
    assert.equal(m.movements.length, 2 + MAX_ASK_LIMIT_DEFLECTIONS);
    assert.equal(m.statuses.filter((s) => s.waitReason === 'question').length, 1, 'parked once');
    assert.equal(m.movements[0].note, undefined);
    for (const deflected of m.movements.slice(2)) assert.ok(deflected.note && deflected.note.length > 0, 'the re-run carries the ask-limit note');
  });

  it('an approval nobody decides expires by its timer and the movement runs again', async () => {
    const m = fresh(pieceWith('approval_timeout: 1'), [
      { next: 'WAITING_HUMAN_TOOL_REQUEST', waitReason: 'tool_request', requestId: 'req-1', summary: 'asks for Bash' },
      { next: 'COMPLETE', summary: 'went on without it' },
    ]);
    const handle = await start(m);
    const result = (await handle.result()) as JobWorkflowResult;
    assert.equal(result.status, 'completed');
    assert.deepEqual(m.expired, ['req-1']);
    assert.equal(m.movements.length, 2);
    assert.deepEqual(m.statuses.map((s) => s.status), ['running', 'waiting_human', 'running', 'completed']);
  });

  it('max_movements bounds a movement that keeps transitioning to itself', async () => {
    const m = fresh(pieceWith('max_movements: 3'), [{ next: 'work', summary: 'again' }]);
    const result = (await (await start(m)).result()) as JobWorkflowResult;
    assert.deepEqual({ status: result.status, reason: result.reason }, { status: 'aborted', reason: 'max_movements' });
    assert.equal(m.movements.length, 3);
  });
});
