// The file tools every job gets, their OpenAI wire form, and the one entry point that runs a call.
import type OpenAI from 'openai';
import { z } from 'zod';
import type { ToolContext, ToolDefinition, ToolOutput } from './tool.js';
import { parseToolArgs } from './tool-args.js';
import { builtinToolsOfKind } from './tool-registry.js';
import { truncateText } from './truncate.js';

export { Workspace, WorkspaceViolationError, prepareWorkspace, listDir } from './workspace.js';
export type { ToolContext, ToolDefinition, ToolOutput } from './tool.js';

/** In the order of engine/tools/tool-traits.ts: the tools array is part of the cached prompt prefix. */
export const FILE_TOOLS = builtinToolsOfKind('file');

/** zod adds ±MAX_SAFE_INTEGER bounds to every .int(): noise that costs prompt tokens on every call. */
function dropSafeIntegerBounds(ctx: { jsonSchema: Record<string, unknown> }): void {
  if (ctx.jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete ctx.jsonSchema.maximum;
  if (ctx.jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete ctx.jsonSchema.minimum;
}

const openAiToolCache = new WeakMap<ToolDefinition, OpenAI.Chat.Completions.ChatCompletionTool>();

/**
 * The chat-completions form of a tool. Same bytes on every call (the LLM's prompt cache keys on
 * them), so it is computed once per definition; `io: 'input'` keeps defaulted fields optional.
 */
export function toOpenAiTool(def: ToolDefinition): OpenAI.Chat.Completions.ChatCompletionTool {
  const cached = openAiToolCache.get(def);
  if (cached) return cached;
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(def.schema, { io: 'input', override: dropSafeIntegerBounds }) as Record<string, unknown>;
  const tool: OpenAI.Chat.Completions.ChatCompletionTool = {
    type: 'function',
    function: { name: def.name, description: def.description, parameters },
  };
  openAiToolCache.set(def, tool);
  return tool;
}

/**
 * Parses, validates and runs one tool call. Never throws: every failure becomes an error result
 * whose text tells the model what to fix. The result is kept within ctx.budgetTokens as a last resort.
 */
export async function executeTool(def: ToolDefinition, rawArgs: string, ctx: ToolContext): Promise<ToolOutput> {
  const checked = parseToolArgs(def.name, def.schema, rawArgs);
  if (!checked.ok) return { isError: true, content: checked.error };
  let out: ToolOutput;
  try {
    out = await def.run(checked.args, ctx);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    out = { isError: true, content: `${def.name} failed: ${message}` };
  }
  const cut = truncateText(out.content, ctx.budgetTokens, { mode: 'head', hint: 'Ask for less output.' });
  return cut.truncated ? { ...out, content: cut.text, truncated: true } : out;
}
