// The job workflow's subtasks and continue-as-new with its activities mocked: a child job started
// as a Temporal child workflow from the spawnChild signal, and a run long enough that the server
// suggests continuing as new. The workflow code is the real bundle; no database, no model.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { spawnChildSignal, type JobWorkflowResult } from '../../core/job-workflow-contract.js';
import { mockedPiece as piece, freshMocks, startMockedJobWorker, type MockedJobWorker } from '../helpers/mocked-job-worker.js';

describe('job workflow with mocked activities: subtasks and continue-as-new', () => {
  let mocked: MockedJobWorker;
  before(async () => {
    mocked = await startMockedJobWorker();
  });
  after(async () => {
    await mocked?.stop();
  });

  it('a subtask runs as a child workflow while the parent parks on it; then the parent resumes its movement', async () => {
    const parentId = randomUUID();
    const childId = randomUUID();
    const m = freshMocks(piece());
    m.subtasks[childId] = parentId;
    const parentRuns = () => m.movements.filter((mv) => mv.jobId === parentId).length;
    m.script = async (input) => {
      if (input.jobId === childId) return { next: 'COMPLETE', summary: 'child done' };
      if (parentRuns() > 1) return { next: 'COMPLETE', summary: 'parent done' };
      // As SpinOffTask then WaitSubTask do: signal before the movement ends, resume at this movement.
      await mocked.client.workflow.getHandle(`job-${parentId}`).signal(spawnChildSignal, { childJobId: childId });
      return { next: 'WAIT_SUBTASKS', resumeMovement: input.movement, summary: 'waits for its subtask' };
    };
    const handle = await mocked.start(m, parentId);
    const result = (await handle.result()) as JobWorkflowResult;
    assert.deepEqual([result.status, result.movementCount], ['completed', 2]);
    const child = (await mocked.client.workflow.getHandle(`job-${childId}`).result()) as JobWorkflowResult;
    assert.equal(child.status, 'completed');

    assert.deepEqual(
      m.movements.map((mv) => [mv.jobId, mv.movement, mv.sequence]),
      [
        [parentId, 'work', 1],
        [childId, 'work', 1],
        [parentId, 'work', 2],
      ],
    );
    const parentStatuses = m.statuses.filter((s) => s.jobId === parentId);
    assert.deepEqual(
      parentStatuses.map((s) => [s.status, s.waitReason]),
      [
        ['running', null],
        ['waiting_subtasks', 'subtasks'],
        ['running', null],
        ['completed', null],
      ],
    );
    // The parent was parked until its child had ended: the child's end is recorded before the resume.
    const childEnd = m.statuses.findIndex((s) => s.jobId === childId && s.status === 'completed');
    const parentResume = m.statuses.findIndex((s, i) => s.jobId === parentId && s.status === 'running' && i > 0);
    assert.ok(childEnd >= 0 && childEnd < parentResume, 'the child ended before the parent resumed');
    assert.deepEqual(
      m.loads.map((l) => l.jobId),
      [parentId, childId],
      'the child loads its own piece by id',
    );
  });

  it('a subtask the worker does not vouch for is not started and the parent does not wait on it', async () => {
    const parentId = randomUUID();
    const stranger = randomUUID();
    const m = freshMocks(piece());
    m.script = async (input) => {
      if (m.movements.length > 1) return { next: 'COMPLETE' };
      await mocked.client.workflow.getHandle(`job-${parentId}`).signal(spawnChildSignal, { childJobId: stranger });
      return { next: 'WAIT_SUBTASKS', resumeMovement: input.movement };
    };
    const result = (await (await mocked.start(m, parentId)).result()) as JobWorkflowResult;
    assert.equal(result.status, 'completed');
    assert.deepEqual(m.movements.map((mv) => mv.jobId), [parentId, parentId]);
    assert.deepEqual(m.loads.map((l) => l.jobId), [parentId], 'no child workflow ran');
  });

  it('continues as new when the server suggests it, carrying the movement and counters into the new run', async () => {
    // The dev server suggests continue-as-new past a history length (4096 events by default); a
    // movement costs about 7 events, so the loop below crosses it after some 600 movements.
    const m = freshMocks(piece('max_movements: 5000\nmax_asks: 0'));
    m.script = () => {
      // The first movement asks: over max_asks 0 it is deflected (asks 1, deflections 1), no park.
      if (m.movements.length === 1) return { next: 'ASK', summary: 'a question?' };
      return m.loads.length > 1 ? { next: 'COMPLETE', summary: 'done in the new run' } : { next: 'work' };
    };
    const handle = await mocked.start(m);
    const result = (await handle.result()) as JobWorkflowResult;

    assert.equal(m.loads.length, 2, 'continued as new once');
    const resume = m.loads[1].resume;
    assert.ok(resume, 'the new run was started with resume state');
    assert.ok(resume.movementCount > 100, `continued after ${resume.movementCount} movements`);
    assert.deepEqual(resume, { movement: 'work', movementCount: resume.movementCount, asks: 1, askDeflections: 1 });
    assert.equal(m.loads[0].resume, undefined);
    assert.equal(m.loads[1].jobId, m.loads[0].jobId);
    assert.equal(m.loads[1].pieceHash, 'hash', 'the new run names the verified hash');

    // The new run picks up where the old one stopped: the next sequence, the same job's count.
    const firstOfNewRun = m.movements[resume.movementCount];
    assert.deepEqual([firstOfNewRun.movement, firstOfNewRun.sequence], ['work', resume.movementCount + 1]);
    assert.deepEqual(
      m.movements.map((mv) => mv.sequence),
      m.movements.map((_, i) => i + 1),
    );
    assert.deepEqual([result.status, result.movementCount], ['completed', resume.movementCount + 1]);
    // Each run projects 'running' once; the new run's carries the count over, not 0.
    assert.deepEqual(
      m.statuses.filter((s) => s.status === 'running').map((s) => s.movementCount),
      [0, resume.movementCount],
    );
  });
});
