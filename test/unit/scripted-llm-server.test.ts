import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { startScriptedLlmServer, type ScriptedResponse } from '../../dev/scripted-llm-server.js';

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'Read', description: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

async function withServer(script: ScriptedResponse[], fn: (s: Awaited<ReturnType<typeof startScriptedLlmServer>>, client: OpenAI) => Promise<void>) {
  const server = await startScriptedLlmServer({ script });
  try {
    await fn(server, new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }));
  } finally {
    await server.stop();
  }
}

describe('scripted LLM server', () => {
  it('answers non-streaming requests with tool calls and usage, and records them', async () => {
    await withServer(
      [
        { content: 'Reading.', toolCalls: [{ name: 'Read', arguments: { path: 'a.txt' } }, { name: 'Read', arguments: '{"path": "b.txt"}' }], usage: { prompt_tokens: 100, completion_tokens: 7 } },
        { content: 'done' },
      ],
      async (server, client) => {
        const r = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'hi' }], tools: TOOLS });
        assert.equal(r.object, 'chat.completion');
        assert.equal(r.model, 'm1');
        const choice = r.choices[0];
        assert.equal(choice.finish_reason, 'tool_calls');
        assert.equal(choice.message.content, 'Reading.');
        const calls = choice.message.tool_calls ?? [];
        assert.deepEqual(
          calls.map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments)] : null)),
          [
            ['call_1', 'Read', { path: 'a.txt' }],
            ['call_2', 'Read', { path: 'b.txt' }],
          ],
        );
        assert.deepEqual(r.usage, { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 });

        const second = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'again' }] });
        assert.equal(second.choices[0].finish_reason, 'stop');
        assert.equal(second.choices[0].message.tool_calls, undefined);
        assert.ok((second.usage?.prompt_tokens ?? 0) > 0, 'a default usage estimate is always present');

        assert.equal(server.requests.length, 2);
        assert.deepEqual(server.requests[0].body.messages, [{ role: 'user', content: 'hi' }]);
        assert.equal(server.requests[0].body.tools[0].function.name, 'Read');
        assert.equal(server.requests[0].headers.authorization, 'Bearer test');
        assert.equal(server.requests[1].index, 1);
      },
    );
  });

  it('streams content, tool-call deltas and a final usage chunk', async () => {
    await withServer(
      [{ content: 'Let me look at that file.', toolCalls: [{ name: 'Read', arguments: { path: 'some/long/path/file.txt', offset: 10 } }], usage: { prompt_tokens: 50, completion_tokens: 5 } }],
      async (server, client) => {
        const stream = client.chat.completions.stream({
          model: 'm2',
          messages: [{ role: 'user', content: 'stream please' }],
          tools: TOOLS,
          stream_options: { include_usage: true },
        });
        let deltas = 0;
        stream.on('content', () => deltas++);
        const done = await stream.finalChatCompletion();
        assert.ok(deltas > 1, 'content arrives in several deltas');
        const msg = done.choices[0].message;
        assert.equal(msg.content, 'Let me look at that file.');
        assert.equal(done.choices[0].finish_reason, 'tool_calls');
        const call = msg.tool_calls?.[0];
        assert.ok(call && call.type === 'function');
        assert.equal(call.id, 'call_1');
        assert.deepEqual(JSON.parse(call.function.arguments), { path: 'some/long/path/file.txt', offset: 10 });
        assert.deepEqual(done.usage, { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 });
        assert.equal(server.requests[0].body.stream, true);
      },
    );
  });

  it('streams without usage when the client does not ask for it, and with usage: null', async () => {
    await withServer([{ content: 'a' }, { content: 'b', usage: null }], async (_server, client) => {
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const c of await client.chat.completions.create({ model: 'm', messages: [], stream: true })) chunks.push(c);
      assert.equal(chunks.filter((c) => c.usage).length, 0);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'a');
      const plain = await client.chat.completions.create({ model: 'm', messages: [] });
      assert.equal(plain.usage, undefined);
    });
  });

  it('answers a scripted 429 with retry-after that the client sees', async () => {
    await withServer([{ status: 429, headers: { 'retry-after': '7' } }], async (server, client) => {
      const err = await client.chat.completions.create({ model: 'm', messages: [] }).then(
        () => assert.fail('expected a 429'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof OpenAI.RateLimitError, String(err));
      assert.equal(err.status, 429);
      assert.equal(err.headers?.get('retry-after'), '7');
      assert.equal(server.requests.length, 1, 'the failed request is recorded too');
    });
  });

  it('says so when the script is exhausted, and plays enqueued responses', async () => {
    await withServer([], async (server, client) => {
      const err = await client.chat.completions.create({ model: 'm', messages: [] }).then(
        () => assert.fail('expected an error'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof OpenAI.InternalServerError);
      assert.match(err.message, /script exhausted/);
      server.enqueue({ content: 'late' });
      const r = await client.chat.completions.create({ model: 'm', messages: [] });
      assert.equal(r.choices[0].message.content, 'late');
    });
  });

  it('uses a handler script, serves /v1/models and delays answers', async () => {
    const server = await startScriptedLlmServer({ script: (req, i) => ({ content: `answer ${i} to ${req.body.messages.length} messages`, delayMs: i === 0 ? 150 : 0 }) });
    try {
      const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
      const started = Date.now();
      const r = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
      assert.ok(Date.now() - started >= 140);
      assert.equal(r.choices[0].message.content, 'answer 0 to 1 messages');
      const models = await client.models.list();
      assert.equal(models.data[0].id, 'scripted-model');
      assert.equal(server.requests.length, 1, '/v1/models is not a chat request');
    } finally {
      await server.stop();
    }
  });

  it('stops promptly even with a request still waiting on its delay', async () => {
    const server = await startScriptedLlmServer({ script: [{ content: 'never', delayMs: 60_000 }] });
    const client = new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
    const pending = client.chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e);
    const deadline = Date.now() + 5_000;
    while (server.requests.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.requests.length, 1);
    const started = Date.now();
    await server.stop();
    assert.ok(Date.now() - started < 2_000);
    assert.ok((await pending) instanceof Error);
  });
});
