// Resume inside a movement: SIGKILL the worker process in the middle of a movement, start another,
// and the movement continues from its checkpoint: no LLM request that was answered is sent again.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { listEvents } from '../../db/repositories/index.js';
import type { ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { startTestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const piece = `
name: resume-test
initial_movement: work
max_movements: 3
system_prompt: You test resumes.
movements:
  - name: work
    instruction: Write two files, then complete.
    allowed_tools: [Write, Glob]
    rules: []
    default_next: COMPLETE
`;

test('a movement continues from its checkpoint after its worker is SIGKILLed', async () => {
  let hungOnce = false;
  const script = (req: { body: any }): ScriptedResponse => {
    const turn = (req.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
    if (turn === 0) return { toolCalls: [{ name: 'Write', arguments: { path: 'output/a.txt', content: 'a' } }] };
    if (turn === 1) return { toolCalls: [{ name: 'Write', arguments: { path: 'output/b.txt', content: 'b' } }] };
    if (!hungOnce) {
      hungOnce = true; // the third call hangs: the worker is killed while waiting for it
      return { delayMs: 120_000, content: 'too late' };
    }
    return { toolCalls: [{ name: 'complete', arguments: { status: 'done', summary: 'both files written' } }] };
  };
  const stack = await startTestStack({ script, worker: false, env: { MAESTRO_HEARTBEAT_TIMEOUT: '3' } });
  const workers: ChildProcess[] = [];
  const startWorker = async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/worker-process.ts'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: stack.config.temporal.address,
        MAESTRO_TASK_QUEUE: stack.config.temporal.taskQueue,
        MAESTRO_LLM_BASE_URL: stack.config.llm.baseUrl,
        MAESTRO_HOME: stack.home,
        DATABASE_URL: stack.databaseUrl,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    workers.push(child);
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    await waitFor(() => out.includes('worker ready'), { timeoutMs: 60_000, message: 'worker process did not start' });
    return child;
  };
  try {
    const first = await startWorker();
    const job = await stack.submit({ pieceYaml: piece, instruction: 'write a and b' });
    await waitFor(() => stack.llm.requests.length >= 3, { timeoutMs: 60_000, message: 'third LLM call never came' });
    first.kill('SIGKILL');
    await once(first, 'exit');

    await startWorker();
    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    assert.equal(row.summary, 'both files written');

    const requests = stack.llm.requests.map((r) => JSON.stringify(r.body.messages));
    assert.equal(requests.length, 4, 'two answered calls, the hung one, and its single retry');
    assert.equal(requests[3], requests[2], 'the new worker re-sent only the call that was never answered');
    assert.notEqual(requests[3], requests[0]);
    assert.equal(new Set(requests.slice(0, 3)).size, 3, 'no answered request was sent twice');
    const events = await listEvents(stack.db, job.id);
    const writes = events.filter((e) => e.type === 'tool.call' && e.data.name === 'Write');
    assert.equal(writes.length, 2, 'each tool ran once');
    assert.ok(events.some((e) => e.type === 'movement.resumed'));
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await stack.stop();
  }
});

test('a hung LLM stream is caught by the heartbeat timeout and the movement is retried from its checkpoint', async () => {
  let hung = false;
  const script = (req: { body: any }): ScriptedResponse => {
    const turn = (req.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
    if (turn === 0) return { toolCalls: [{ name: 'Write', arguments: { path: 'output/a.txt', content: 'a' } }] };
    if (!hung) {
      hung = true; // the second call never answers: no chunks, no heartbeats
      return { delayMs: 120_000, content: 'never' };
    }
    return { toolCalls: [{ name: 'complete', arguments: { status: 'done', summary: 'done after the hang' } }] };
  };
  const stack = await startTestStack({ script, env: { MAESTRO_HEARTBEAT_TIMEOUT: '2' } });
  try {
    const job = await stack.submit({ pieceYaml: piece, instruction: 'survive a hang' });
    const { result } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    const bodies = stack.llm.requests.map((r) => JSON.stringify(r.body.messages));
    assert.equal(bodies.length, 3);
    assert.equal(bodies[2], bodies[1], 'the retried attempt resent only the unanswered request');
    const events = await listEvents(stack.db, job.id);
    assert.equal(events.filter((e) => e.type === 'tool.call').length, 1, 'the Write before the hang ran once');
    assert.ok(events.some((e) => e.type === 'movement.resumed'));
  } finally {
    await stack.stop();
  }
});
