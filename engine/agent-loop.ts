// The agent loop of one movement: send the messages, answer the tools the model calls, append the
// results, until the model transitions or completes, or a guard ends the movement. It runs inside the
// runMovement activity; a park always ENDS the loop (invariant: park ends the movement).
// The conversation is checkpointed after every LLM response and every tool result, so a retried
// attempt continues where the last one stopped instead of asking the model again.
import type { EmitJobEvent } from '../core/job-events.js';
import type { MovementOutcome, MovementResult, Piece, PieceMovement, TokenUsage } from '../core/types.js';
import { ContextManager, type ContextSnapshot } from './context-manager.js';
import type { ChatMessage, ChatTool, LlmClient, LlmToolCall } from './llm-client.js';
import { startLlmHeartbeat } from './llm-heartbeat.js';
import { movementTargets } from './piece/piece-targets.js';
import { dispatchToolCall } from './tool-dispatch.js';
import type { ToolServices, ToolDefinition, ToolImage } from './tools/tool.js';
import type { Workspace } from './tools/workspace.js';

export const DEFAULT_LLM_STALL_MS = 60_000;
export const TEXT_ONLY_REMINDER =
  'Reply with a tool call: use the tools to do the work, then call `transition` to move on or `complete` to finish.';
export const WRAP_UP_PROMPT =
  'The context window is nearly full. Wrap up this step now: save what matters to files and call `transition` (or `complete`).';

export interface AgentLoopInput {
  jobId: string;
  piece: Piece;
  movement: PieceMovement;
  systemPrompt: string;
  userPrompt: string;
  /** The wire form sent with every request (buildJobTools). */
  tools: ChatTool[];
  /** What runs when the model calls a tool (jobToolDefinitions). */
  toolDefinitions: ToolDefinition[];
  grantedTools?: string[];
  services?: ToolServices;
  workspace: Workspace;
  contextWindow: number;
  /** Silence from the LLM after which heartbeats stop, so the heartbeat timeout catches a hang. */
  llmStallMs?: number;
}

/** Everything besides the messages that a resumed attempt needs. */
export interface LoopState {
  iteration: number;
  textOnly: number;
  llmCalls: number;
  usage: TokenUsage;
  context: ContextSnapshot;
  wrapUpPending: boolean;
  /** Images returned by tools, added as one user message once every pending call is answered. */
  pendingImages: ToolImage[];
}

export interface Checkpointer {
  load(): Promise<{ messages: ChatMessage[]; state: LoopState; checkpointId: number } | undefined>;
  save(messages: ChatMessage[], state: LoopState): Promise<number>;
}

export interface AgentLoopDeps {
  llm: LlmClient;
  signal: AbortSignal;
  heartbeat(details: { checkpointId: number | null; iteration: number }): void;
  emit: EmitJobEvent;
  checkpointer?: Checkpointer;
}

/** The movement's outcome and what the loop counted on the way. */
export interface AgentLoopResult extends MovementOutcome, Pick<MovementResult, 'iterations' | 'usage'> {
  llmCalls: number;
  resumed: boolean;
}

export async function runAgentLoop(input: AgentLoopInput, deps: AgentLoopDeps): Promise<AgentLoopResult> {
  const { movement, piece } = input;
  const maxIterations = movement.max_iterations ?? piece.max_iterations;
  const textOnlyLimit = movement.text_only_limit ?? piece.text_only_limit;
  const context = new ContextManager(input.contextWindow, piece.context_thresholds);
  const restored = await deps.checkpointer?.load();
  const messages: ChatMessage[] = restored?.messages ?? [
    { role: 'system', content: input.systemPrompt },
    { role: 'user', content: input.userPrompt },
  ];
  const state: LoopState = restored?.state ?? {
    iteration: 0,
    textOnly: 0,
    llmCalls: 0,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    context: context.snapshot(),
    wrapUpPending: false,
    pendingImages: [],
  };
  context.restore(state.context);
  let checkpointId: number | null = restored?.checkpointId ?? null;
  if (restored) await deps.emit('movement.resumed', { checkpointId, iteration: state.iteration, messages: messages.length });

  const heartbeat = () => deps.heartbeat({ checkpointId, iteration: state.iteration });
  const save = async () => {
    state.context = context.snapshot();
    if (deps.checkpointer) checkpointId = await deps.checkpointer.save(messages, state);
    heartbeat();
  };
  const end = (e: Omit<MovementOutcome, 'lessons'> & { lessons?: string[] }): AgentLoopResult => ({
    lessons: [],
    ...e,
    iterations: state.iteration,
    llmCalls: state.llmCalls,
    usage: state.usage,
    resumed: Boolean(restored),
  });
  const dispatch = {
    jobId: input.jobId,
    movement,
    allowedTargets: movementTargets(movement).filter((t) => t !== 'COMPLETE' && t !== 'ABORT'),
    workspace: input.workspace,
    context,
    signal: deps.signal,
    heartbeat,
    emit: deps.emit,
    tools: input.toolDefinitions,
    grantedTools: input.grantedTools ?? [],
    services: input.services,
    sandbox: { network: movement.network === true, env: { ...piece.env, ...movement.env } },
  };

  for (;;) {
    const pending = pendingToolCalls(messages);
    if (pending.length > 0) {
      for (const call of pending) {
        const outcome = await dispatchToolCall(call, dispatch);
        if (outcome.kind === 'end') return end(outcome.end);
        messages.push({ role: 'tool', tool_call_id: call.id, content: outcome.content });
        if (outcome.images) state.pendingImages.push(...outcome.images);
        await save();
      }
      if (state.pendingImages.length) {
        // Tool messages carry text only; images follow them as a user message (OpenAI wire format).
        messages.push(imageMessage(state.pendingImages));
        state.pendingImages = [];
        await save();
      }
      if (state.wrapUpPending) {
        state.wrapUpPending = false;
        messages.push({ role: 'user', content: WRAP_UP_PROMPT });
        await save();
      }
      continue;
    }

    if (state.iteration >= maxIterations) {
      return end({ next: 'ABORT', summary: `stopped after ${maxIterations} iterations`, reason: 'max_iterations' });
    }
    state.iteration += 1;
    heartbeat();
    const started = Date.now();
    const beats = startLlmHeartbeat(heartbeat, input.llmStallMs ?? DEFAULT_LLM_STALL_MS);
    const response = await deps.llm
      .complete(
        { messages, tools: input.tools },
        { signal: deps.signal, onChunk: beats.alive, onRetry: (n) => deps.emit('llm.retry', { ...n }) },
      )
      .finally(() => beats.stop());
    state.llmCalls += 1;
    if (response.usage) addUsage(state.usage, response.usage);
    const crossed = context.record({
      iteration: state.iteration,
      promptTokens: response.usage?.promptTokens ?? null,
      messageChars: messageChars(messages),
    });
    await deps.emit('llm.call', {
      iteration: state.iteration,
      durationMs: Date.now() - started,
      promptTokens: response.usage?.promptTokens ?? null,
      completionTokens: response.usage?.completionTokens ?? null,
      contextRatio: Number(context.ratio.toFixed(4)),
      toolCalls: response.toolCalls.map((c) => c.name),
    });
    for (const action of crossed) {
      await deps.emit('context.threshold', { action, ratio: Number(context.ratio.toFixed(4)), usedTokens: context.usedTokens });
    }
    if (crossed.includes('force_transition')) {
      const next = movement.default_next ?? 'ABORT';
      const summary = `context ${Math.round(context.ratio * 100)}% full: forced transition to ${next}`;
      return end({ next, summary, reason: 'context_force_transition' });
    }
    if (crossed.includes('prompt')) state.wrapUpPending = true;

    messages.push(assistantMessage(response.content, response.toolCalls));
    if (response.toolCalls.length === 0) {
      state.textOnly += 1;
      await deps.emit('guard', { kind: 'text_only', count: state.textOnly, limit: textOnlyLimit });
      if (state.textOnly >= textOnlyLimit) {
        return end({ next: 'ABORT', summary: response.content.slice(0, 500), reason: 'text_only_limit' });
      }
      messages.push({ role: 'user', content: state.wrapUpPending ? WRAP_UP_PROMPT : TEXT_ONLY_REMINDER });
      state.wrapUpPending = false;
    } else {
      state.textOnly = 0;
    }
    await save();
  }
}

/** Tool calls of the last assistant message that have no result yet (after a resume, or just made). */
export function pendingToolCalls(messages: ChatMessage[]): LlmToolCall[] {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (m.role !== 'assistant') continue;
    if (!('tool_calls' in m) || !m.tool_calls?.length) return [];
    const answered = new Set(
      messages.slice(i + 1).flatMap((x) => (x.role === 'tool' ? [x.tool_call_id] : [])),
    );
    return m.tool_calls
      .filter((c) => c.type === 'function' && !answered.has(c.id))
      .map((c) => ({ id: c.id, name: (c as any).function.name, arguments: (c as any).function.arguments }));
  }
  return [];
}

function assistantMessage(content: string, toolCalls: LlmToolCall[]): ChatMessage {
  if (!toolCalls.length) return { role: 'assistant', content };
  return {
    role: 'assistant',
    content: content || null,
    tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
  };
}

function imageMessage(images: ToolImage[]): ChatMessage {
  return {
    role: 'user',
    content: images.flatMap((img) => [
      { type: 'text' as const, text: `Image ${img.label}:` },
      { type: 'image_url' as const, image_url: { url: `data:${img.mimeType};base64,${img.base64}` } },
    ]),
  };
}

/** Characters for the usage estimate; an image counts as a fixed amount, not its base64 length. */
export const IMAGE_ESTIMATE_CHARS = 4 * 1000;
export function messageChars(messages: ChatMessage[]): number {
  return JSON.stringify(messages, (key, value) =>
    key === 'url' && typeof value === 'string' && value.startsWith('data:') ? 'x'.repeat(IMAGE_ESTIMATE_CHARS) : value,
  ).length;
}

function addUsage(total: TokenUsage, add: TokenUsage): void {
  total.promptTokens += add.promptTokens;
  total.completionTokens += add.completionTokens;
  total.totalTokens += add.totalTokens;
}
