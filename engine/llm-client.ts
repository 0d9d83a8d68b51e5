// The engine's only door to the model: any OpenAI-compatible chat-completions endpoint, reached with
// the `openai` package over real HTTP. Responses are streamed so that progress (and a hang) is visible.
import OpenAI from 'openai';
import type { MaestroConfig } from '../config/config.js';
import { redactError, registerSecret } from '../core/redact.js';
import type { TokenUsage } from '../core/types.js';
import { DEFAULT_LLM_RETRY, LlmNotConfiguredError, type RetryPolicy } from './llm-errors.js';
import { withLlmRetries, type RetryNotice } from './llm-retry.js';

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface LlmResponse {
  content: string;
  toolCalls: LlmToolCall[];
  usage: TokenUsage | null;
  finishReason: string | null;
}

export interface LlmClient {
  model: string;
  complete(
    req: { messages: ChatMessage[]; tools: ChatTool[] },
    opts: { signal?: AbortSignal; onChunk?: () => void; onRetry?: (n: RetryNotice) => void | Promise<void> },
  ): Promise<LlmResponse>;
}

export function createLlmClient(llm: MaestroConfig['llm'], retryPolicy: RetryPolicy = DEFAULT_LLM_RETRY): LlmClient {
  if (!llm.baseUrl) {
    throw new LlmNotConfiguredError('MAESTRO_LLM_BASE_URL is not set: the worker has no model to talk to');
  }
  registerSecret(llm.apiKey);
  const client = new OpenAI({
    baseURL: llm.baseUrl,
    // Local servers (llama-server, vLLM, Ollama) accept any key; the SDK insists on a non-empty one.
    apiKey: llm.apiKey ?? 'not-needed',
    // Retries are ours (engine/llm-retry.ts): they honour retry-after and show up as job events.
    maxRetries: 0,
    timeout: 10 * 60 * 1000,
  });
  return {
    model: llm.model,
    complete(req, opts) {
      const once = async () => {
        try {
          const stream = await client.chat.completions.create(
            {
              model: llm.model,
              messages: req.messages,
              tools: req.tools.length ? req.tools : undefined,
              stream: true,
              stream_options: { include_usage: true },
            },
            { signal: opts.signal },
          );
          return await collectStream(stream, opts.onChunk);
        } catch (err) {
          // A provider's error text may echo the key it was sent ("invalid key sk-..."): scrub it
          // before anything (events, the activity failure, logs) sees the error.
          throw redactError(err);
        }
      };
      return withLlmRetries(once, { signal: opts.signal, onRetry: opts.onRetry, policy: retryPolicy });
    },
  };
}

async function collectStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
  onChunk?: () => void,
): Promise<LlmResponse> {
  let content = '';
  let finishReason: string | null = null;
  let usage: TokenUsage | null = null;
  const calls = new Map<number, LlmToolCall>();
  for await (const chunk of stream) {
    onChunk?.();
    if (chunk.usage) {
      usage = {
        promptTokens: chunk.usage.prompt_tokens,
        completionTokens: chunk.usage.completion_tokens,
        totalTokens: chunk.usage.total_tokens,
      };
    }
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    if (choice.delta.content) content += choice.delta.content;
    for (const tc of choice.delta.tool_calls ?? []) {
      const call = calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
      if (tc.id) call.id = tc.id;
      if (tc.function?.name) call.name += tc.function.name;
      if (tc.function?.arguments) call.arguments += tc.function.arguments;
      calls.set(tc.index, call);
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }));
  return { content, toolCalls, usage, finishReason };
}
