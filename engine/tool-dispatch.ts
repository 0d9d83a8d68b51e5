// Answers one tool call of the model: control-flow tools (transition, complete) end the movement or
// are refused with the valid choices; other tools are checked against the movement's permissions and
// run inside the workspace. Every refusal is a tool result the model can act on, never an exception.
import type { EmitJobEvent } from '../core/job-events.js';
import type { MovementOutcome, PieceMovement } from '../core/types.js';
import type { ContextManager } from './context-manager.js';
import type { LlmToolCall } from './llm-client.js';
import { COMPLETE_TOOL, parseComplete } from './tools/complete.tool.js';
import { executeTool } from './tools/index.js';
import type { ToolServices, SandboxGrant, ToolDefinition, ToolImage, ToolPark } from './tools/tool.js';
import { ALWAYS_ALLOWED_TOOL_NAMES } from './tools/tool-traits.js';
import { checkTransition, TRANSITION_TOOL } from './tools/transition.tool.js';
import type { Workspace } from './tools/workspace.js';

/** A call either ends the movement (a control-flow tool succeeded, or a tool parked) or is answered. */
export type CallOutcome = { kind: 'end'; end: MovementOutcome } | { kind: 'result'; content: string; images?: ToolImage[] };

export interface DispatchContext {
  jobId: string;
  movement: PieceMovement;
  allowedTargets: string[];
  workspace: Workspace;
  context: ContextManager;
  signal: AbortSignal;
  heartbeat(): void;
  emit: EmitJobEvent;
  /** Every tool of the job besides transition and complete, looked up by name. */
  tools: ToolDefinition[];
  /** Tools a person approved for the rest of the job (RequestTool). */
  grantedTools: string[];
  services?: ToolServices;
  sandbox?: SandboxGrant;
}

export async function dispatchToolCall(call: LlmToolCall, ctx: DispatchContext): Promise<CallOutcome> {
  if (call.name === TRANSITION_TOOL) {
    const check = checkTransition(call.arguments, ctx.movement.name, ctx.allowedTargets);
    if (check.ok) return { kind: 'end', end: { next: check.args.next, summary: check.args.summary, lessons: check.args.lessons } };
    await ctx.emit('transition.invalid', { arguments: shorten(call.arguments), error: check.error });
    return { kind: 'result', content: `Error: ${check.error}` };
  }
  if (call.name === COMPLETE_TOOL) return completeOutcome(call);
  const out = await runTool(call, ctx);
  if (out.park) return { kind: 'end', end: { ...out.park, lessons: [] } };
  return { kind: 'result', content: out.content, images: out.images };
}

function completeOutcome(call: LlmToolCall): CallOutcome {
  const parsed = parseComplete(call.arguments);
  if (!parsed.ok) return { kind: 'result', content: `Error: ${parsed.error}` };
  const { status, summary, question, lessons } = parsed.args;
  if (status === 'needs_user_input') return { kind: 'end', end: { next: 'ASK', summary, question, lessons } };
  if (status === 'failed') {
    return { kind: 'end', end: { next: 'ABORT', summary, reason: summary || 'the model gave up', lessons } };
  }
  return { kind: 'end', end: { next: 'COMPLETE', summary, lessons } };
}

async function runTool(call: LlmToolCall, ctx: DispatchContext): Promise<{ content: string; images?: ToolImage[]; park?: ToolPark }> {
  const started = Date.now();
  const def = ctx.tools.find((t) => t.name === call.name);
  const allowed = [...ctx.movement.allowed_tools, ...ALWAYS_ALLOWED_TOOL_NAMES, ...ctx.grantedTools];
  let content: string;
  let isError = true;
  let truncated = false;
  let images: ToolImage[] | undefined;
  let park: ToolPark | undefined;
  if (!def) {
    content = `Error: unknown tool "${call.name}".`;
  } else if (!allowed.includes(call.name)) {
    const here = [...ctx.movement.allowed_tools, ...ctx.grantedTools].join(', ') || '(none)';
    content =
      `Error: the tool ${call.name} is not allowed in step "${ctx.movement.name}". Allowed here: ${here}. ` +
      'If you need it, ask for it with RequestTool({tool, reason}).';
  } else {
    // A long tool is progress, not a hang: keep heartbeating while it runs.
    const ticker = setInterval(() => ctx.heartbeat(), 10_000);
    try {
      const out = await executeTool(def, call.arguments, {
        jobId: ctx.jobId,
        workspace: ctx.workspace,
        signal: ctx.signal,
        budgetTokens: ctx.context.toolBudgetTokens(),
        movement: ctx.movement.name,
        services: ctx.services,
        sandbox: ctx.sandbox,
        toolNames: ctx.tools.map((t) => t.name),
        // Approved tools are left out: RequestTool answers those from the decided request (with its note).
        allowedTools: [...ctx.movement.allowed_tools, ...ALWAYS_ALLOWED_TOOL_NAMES],
      });
      content = out.isError ? `Error: ${out.content}` : out.content;
      isError = Boolean(out.isError);
      truncated = Boolean(out.truncated);
      images = out.images;
      park = out.park;
    } finally {
      clearInterval(ticker);
    }
  }
  await ctx.emit('tool.call', {
    name: call.name,
    arguments: shorten(call.arguments),
    durationMs: Date.now() - started,
    isError,
    truncated,
    ...(park ? { park: park.next, waitReason: park.waitReason } : {}),
  });
  return { content, images, park };
}

export function shorten(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
