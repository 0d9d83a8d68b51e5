// The agent loop against the scripted OpenAI-compatible server over real HTTP (no Temporal needed):
// context thresholds, the estimate path, guards, and how LLM errors are retried or refused.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Piece } from '../../core/types.js';
import { PIECE_DEFAULTS } from '../../core/piece-defaults.js';
import { runAgentLoop, TEXT_ONLY_REMINDER, WRAP_UP_PROMPT, type AgentLoopDeps } from '../../engine/agent-loop.js';
import { buildJobTools, jobToolDefinitions } from '../../engine/job-tools.js';
import { createLlmClient } from '../../engine/llm-client.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';
import { startScriptedLlmServer, type ScriptedResponse } from '../../dev/scripted-llm-server.js';

const piece: Piece = {
  ...PIECE_DEFAULTS,
  name: 'loop-test',
  initial_movement: 'work',
  max_movements: 5,
  system_prompt: 'You are a test.',
  movements: [
    { name: 'work', instruction: 'Work.', allowed_tools: ['Glob', 'ReadImage'], rules: [{ condition: 'done', next: 'check' }], default_next: 'check' },
    { name: 'check', instruction: 'Check.', allowed_tools: [], rules: [] },
  ],
};
const glob: ScriptedResponse = { toolCalls: [{ name: 'Glob', arguments: { pattern: '*' } }] };
const usage = (prompt: number) => ({ prompt_tokens: prompt, completion_tokens: 5 });

describe('agent loop', () => {
  let dir: string;
  let workspace: Workspace;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-loop-'));
    workspace = await prepareWorkspace(dir);
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  async function run(script: ScriptedResponse[], opts: { contextWindow?: number; userPrompt?: string; p?: Piece } = {}) {
    const server = await startScriptedLlmServer({ script });
    const events: Array<{ type: string; data: Record<string, unknown> }> = [];
    const deps: AgentLoopDeps = {
      llm: createLlmClient({ baseUrl: server.url, apiKey: 'k', model: 'm', contextWindow: 0 }, { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 }),
      signal: new AbortController().signal,
      heartbeat: () => {},
      emit: async (type, data) => void events.push({ type, data }),
    };
    const p = opts.p ?? piece;
    try {
      const result = await runAgentLoop(
        {
          jobId: 'j',
          piece: p,
          movement: p.movements[0],
          systemPrompt: p.system_prompt,
          userPrompt: opts.userPrompt ?? 'do it',
          tools: buildJobTools(p),
          toolDefinitions: jobToolDefinitions(),
          workspace,
          contextWindow: opts.contextWindow ?? 1000,
        },
        deps,
      );
      return { result, events, requests: server.requests };
    } finally {
      await server.stop();
    }
  }

  const thresholdsOf = (events: Array<{ type: string; data: Record<string, unknown> }>) =>
    events.filter((e) => e.type === 'context.threshold').map((e) => e.data.action);

  test('each threshold fires once at its usage; 85% asks to wrap up; 95% forces default_next', async () => {
    const { result, events, requests } = await run([
      { ...glob, usage: usage(500) },
      { ...glob, usage: usage(700) },
      { ...glob, usage: usage(720) },
      { ...glob, usage: usage(850) },
      { ...glob, usage: usage(950) },
    ]);
    assert.deepEqual(thresholdsOf(events), ['warn', 'prompt', 'force_transition']);
    const warnAt = events.findIndex((e) => e.data.action === 'warn');
    const llmCallsBeforeWarn = events.slice(0, warnAt).filter((e) => e.type === 'llm.call').length;
    assert.equal(llmCallsBeforeWarn, 2, 'warn fires on the 2nd call (700/1000), not the 1st');
    const wrapUp = (m: { content?: unknown }) => m.content === WRAP_UP_PROMPT;
    assert.ok(!requests[3].body.messages.some(wrapUp), 'no wrap-up before 85%');
    assert.ok(requests[4].body.messages.some(wrapUp), 'wrap-up message after 85%');
    assert.equal(requests[4].body.messages.filter(wrapUp).length, 1);
    assert.equal(result.next, 'check');
    assert.equal(result.reason, 'context_force_transition');
  });

  test('99% marks the context exhausted; without default_next a forced transition aborts', async () => {
    const p: Piece = { ...piece, movements: [{ ...piece.movements[0], default_next: undefined }, piece.movements[1]] };
    const { result, events } = await run([{ ...glob, usage: usage(995) }], { p });
    assert.deepEqual(thresholdsOf(events), ['warn', 'prompt', 'force_transition', 'exhausted']);
    assert.equal(result.next, 'ABORT');
    assert.equal(result.reason, 'context_force_transition');
  });

  test('without usage, the estimate from the messages starts at the 3rd iteration', async () => {
    const { events } = await run([{ ...glob, usage: null }, { ...glob, usage: null }, { ...glob, usage: null }, { ...glob, usage: null }], {
      userPrompt: 'x'.repeat(2900),
    });
    const calls = events.filter((e) => e.type === 'llm.call' || e.type === 'context.threshold');
    const firstThreshold = calls.findIndex((e) => e.type === 'context.threshold');
    assert.equal(calls.slice(0, firstThreshold).filter((e) => e.type === 'llm.call').length, 3);
    assert.equal(calls[firstThreshold].data.action, 'warn');
  });

  test('text-only replies get a reminder, then ABORT with text_only_limit', async () => {
    const { result, requests } = await run([{ content: 'thinking' }, { content: 'still thinking' }, { content: 'more' }]);
    assert.equal(requests[1].body.messages.at(-1).content, TEXT_ONLY_REMINDER);
    assert.equal(result.next, 'ABORT');
    assert.equal(result.reason, 'text_only_limit');
    assert.equal(result.iterations, 3);
  });

  test('max_iterations ends the movement with ABORT', async () => {
    const p: Piece = { ...piece, max_iterations: 2 };
    const { result, requests } = await run([glob, glob, glob], { p });
    assert.equal(requests.length, 2);
    assert.equal(result.next, 'ABORT');
    assert.equal(result.reason, 'max_iterations');
  });

  test('a tool the movement does not allow is refused with an error tool result', async () => {
    const { result, requests } = await run([
      { toolCalls: [{ name: 'Write', arguments: { path: 'a.txt', content: 'x' } }] },
      { toolCalls: [{ name: 'transition', arguments: { next: 'check', summary: 'ok' } }] },
    ]);
    const toolMsg = requests[1].body.messages.find((m: { role: string }) => m.role === 'tool');
    assert.match(toolMsg.content, /Write is not allowed in step "work"\. Allowed here: Glob/);
    assert.equal(result.next, 'check');
  });

  test('429 is retried after the retry-after the server asked for', async () => {
    const { result, requests, events } = await run([
      { status: 429, headers: { 'retry-after': '1' } },
      { toolCalls: [{ name: 'transition', arguments: { next: 'check', summary: 'ok' } }] },
    ]);
    assert.equal(result.next, 'check');
    assert.equal(requests.length, 2);
    const gap = requests[1].receivedAt - requests[0].receivedAt;
    assert.ok(gap >= 950, `waited ${gap} ms for retry-after: 1`);
    const retry = events.find((e) => e.type === 'llm.retry');
    assert.equal(retry?.data.status, 429);
    assert.equal(retry?.data.delayMs, 1000);
  });

  test('ReadImage adds the image as an image part that stays in the movement', async () => {
    // A 1x1 PNG.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==', 'base64');
    await writeFile(path.join(dir, 'input', 'dot.png'), png);
    const { requests } = await run([
      { toolCalls: [{ name: 'ReadImage', arguments: { path: 'input/dot.png' } }] },
      glob,
      { toolCalls: [{ name: 'transition', arguments: { next: 'check', summary: 'saw it' } }] },
    ]);
    const imagePart = (r: { body: any }) =>
      r.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((p: any) => p.type === 'image_url');
    assert.equal(imagePart(requests[0]), undefined);
    assert.equal(imagePart(requests[1])?.image_url.url, `data:image/png;base64,${png.toString('base64')}`);
    assert.ok(imagePart(requests[2]), 'the image stays in the movement context');
    const toolMsg = requests[1].body.messages.find((m: any) => m.role === 'tool');
    assert.match(toolMsg.content, /Loaded image input\/dot\.png \(image\/png/);
  });

  test('401 is not retried', async () => {
    await assert.rejects(
      run([{ status: 401, errorBody: { error: { message: 'bad key', type: 'invalid_request_error' } } }, glob]),
      (err: unknown) => err instanceof OpenAI.AuthenticationError,
    );
  });
});
