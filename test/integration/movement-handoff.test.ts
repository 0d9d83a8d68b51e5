// What passes between movements, and nothing else: lessons (capped, in order, logged), verify
// feedback routed to the movement it sends the job back to, checklists with their state. The past
// conversation, logs and file bodies never reach a later movement's prompt.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { currentMovementOf } from '../../dev/movement-script.js';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { startTestStack } from '../helpers/test-stack.js';

const call = (name: string, args: Record<string, unknown>, content?: string): ScriptedResponse => ({
  content,
  toolCalls: [{ name, arguments: args }],
});

/** Per movement, a list of runs; each run a list of turns. */
const RUNS: Record<string, ScriptedResponse[][]> = {
  plan: [
    [
      call('Read', { path: 'input/secret.txt' }, 'PLAN-CONVERSATION-789: reading the brief'),
      call('Read', { path: 'logs/run.log' }),
      call('transition', { next: 'implement', summary: 'planned', lessons: ['lesson-from-plan'] }),
    ],
  ],
  implement: [
    [call('transition', { next: 'review', summary: 'first try', lessons: ['lesson-from-implement-1'] })],
    [call('transition', { next: 'review', summary: 'fixed it' })],
  ],
  review: [
    [call('transition', { next: 'implement', summary: 'FINDING: fix the off-by-one in output/x.py' })],
    [call('complete', { status: 'done', summary: 'looks right now' })],
  ],
};

function handoffModel() {
  const runs = new Map<string, number>();
  return (req: RecordedRequest): ScriptedResponse => {
    const movement = currentMovementOf(req);
    const turn = (req.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
    if (turn === 0) runs.set(movement, (runs.get(movement) ?? 0) + 1);
    const run = RUNS[movement]?.[(runs.get(movement) ?? 1) - 1];
    return run?.[Math.min(turn, run.length - 1)] ?? { content: `unscripted ${movement}` };
  };
}

test('lessons, feedback and checklists pass between movements; conversations, logs and files do not', async () => {
  const stack = await startTestStack({ script: handoffModel() });
  await mkdir(path.join(stack.home, 'workspaces'), { recursive: true });
  const workspace = await mkdtemp(path.join(stack.home, 'workspaces', 'handoff-'));
  try {
    await mkdir(path.join(workspace, 'input'), { recursive: true });
    await writeFile(path.join(workspace, 'input/secret.txt'), 'SECRET-FILE-BODY-123\n');
    await mkdir(path.join(workspace, 'logs/checklists'), { recursive: true });
    await writeFile(path.join(workspace, 'logs/run.log'), 'LOG-BODY-456\n');
    await writeFile(
      path.join(workspace, 'logs/checklists/work.json'),
      JSON.stringify({ title: 'Work', items: [{ text: 'plan', done: true }, { text: 'fix off-by-one', done: false }] }),
    );
    const job = await stack.submit({ piece: 'develop', instruction: 'handoff test', workspace });
    const { result } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');

    const firstRequests = stack.llm.requests.filter((r) => r.body.messages.filter((m: any) => m.role === 'assistant').length === 0);
    assert.deepEqual(firstRequests.map(currentMovementOf), ['plan', 'implement', 'review', 'implement', 'review']);
    const prompt = (i: number) => firstRequests[i].body.messages.find((m: any) => m.role === 'user').content as string;

    for (let i = 1; i < firstRequests.length; i += 1) {
      const p = JSON.stringify(firstRequests[i].body.messages);
      for (const leak of ['SECRET-FILE-BODY-123', 'LOG-BODY-456', 'PLAN-CONVERSATION-789']) {
        assert.ok(!p.includes(leak), `movement ${i + 1} was sent ${leak}`);
      }
      assert.equal(firstRequests[i].body.messages.length, 2, 'a movement starts from system + user only');
    }
    assert.match(prompt(1), /## Lessons from previous steps\n- lesson-from-plan\n\n/);
    assert.match(prompt(3), /## Lessons from previous steps\n- lesson-from-plan\n- lesson-from-implement-1\n\n/);
    assert.match(prompt(1), /### Work \(1\/2 done, logs\/checklists\/work\.json\)\n- \[x\] plan\n- \[ \] fix off-by-one/);

    assert.ok(!prompt(1).includes('## Feedback for this step'), 'no feedback before review ran');
    assert.match(prompt(3), /## Feedback for this step\nFrom review:\nFINDING: fix the off-by-one in output\/x\.py/);
    assert.ok(!prompt(4).includes('FINDING'), 'feedback goes to the movement it sends back to only');
    assert.match(prompt(2), /## Workspace changes \(git\)\n\(the workspace is not a git repository\)/);

    const log = (await readFile(path.join(workspace, 'logs/lessons.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(
      log.map((l) => [l.movement, l.text]),
      [
        ['plan', 'lesson-from-plan'],
        ['implement', 'lesson-from-implement-1'],
        ['review', 'looks right now'],
      ],
    );
  } finally {
    await stack.stop();
    await rm(workspace, { recursive: true, force: true });
  }
});
