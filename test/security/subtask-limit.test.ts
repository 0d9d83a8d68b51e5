// A model that fans out without end (issue 7): SpinOffTask starts at most MAESTRO_MAX_SUBTASKS
// children per job; a call over the cap gets an error tool result the model can act on, and a
// repeated call that already started its child is not counted again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listJobs } from '../../db/repositories/index.js';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';

const PIECE = `
name: fanout
initial_movement: work
max_movements: 5
system_prompt: You split work into subtasks.
movements:
  - name: work
    instruction: Start the subtasks, then complete.
    allowed_tools: [SpinOffTask]
    rules: []
    default_next: COMPLETE
`;

const call = (name: string, args: Record<string, unknown> = {}): ScriptedResponse => ({ toolCalls: [{ name, arguments: args }] });

type Msg = { role: string; content?: unknown };
const messagesOf = (req: RecordedRequest) => (req.body.messages ?? []) as Msg[];
const taskOf = (req: RecordedRequest) => /## Task\n([\s\S]*?)\n\n## /.exec(String(messagesOf(req).find((m) => m.role === 'user')?.content ?? ''))?.[1] ?? '';
const toolResults = (req: RecordedRequest) => messagesOf(req).filter((m) => m.role === 'tool').map((m) => String(m.content));

const PARENT = [
  call('SpinOffTask', { instruction: 'child one', piece: 'chat' }),
  call('SpinOffTask', { instruction: 'child two', piece: 'chat' }),
  call('SpinOffTask', { instruction: 'child three', piece: 'chat' }),
  call('SpinOffTask', { instruction: 'child one', piece: 'chat' }),
  call('complete', { status: 'done', summary: 'fanned out' }),
];

function handler(req: RecordedRequest): ScriptedResponse {
  if (taskOf(req).startsWith('child ')) return call('complete', { status: 'done', summary: 'child done' });
  return PARENT[Math.min(messagesOf(req).filter((m) => m.role === 'assistant').length, PARENT.length - 1)]!;
}

describe('subtask limit', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({ script: handler, env: { MAESTRO_MAX_SUBTASKS: '2' } });
  });
  after(async () => stack?.stop());

  test('the third SpinOffTask over MAESTRO_MAX_SUBTASKS=2 gets an error result; the job goes on', async () => {
    const parent = await stack.submit({ pieceYaml: PIECE, instruction: 'fan out three ways' });
    const { result } = await stack.finish(parent.id);
    assert.equal(result?.status, 'completed');

    const children = await listJobs(stack.db, { parentId: parent.id });
    assert.deepEqual(children.map((c) => c.instruction).sort(), ['child one', 'child two'], 'two children, not three');

    const last = stack.llm.requests.filter((r) => taskOf(r) === 'fan out three ways').at(-1);
    assert.ok(last);
    const results = toolResults(last);
    assert.match(results[0]!, /^started subtask job /);
    assert.match(results[1]!, /^started subtask job /);
    assert.match(results[2]!, /Not started: this job has started 2 subtasks; the limit is 2 \(MAESTRO_MAX_SUBTASKS\)/);
    assert.match(results[2]!, /Do the remaining work yourself/);
    // The same call as the first one finds its child, over the cap or not.
    assert.match(results[3]!, /^already started as job /);
  });
});
