// The tools of a job: their definitions (what runs) and their wire form (what the model sees). The
// wire form is the same bytes in every request of every movement (invariant: byte-stable prompt
// prefix; any change to the tools array invalidates the whole prompt cache). Permission per movement is checked at call time.
import type { Piece } from '../core/types.js';
import type { ChatTool } from './llm-client.js';
import { collectPieceTransitionTargets } from './piece/piece-targets.js';
import { completeTool } from './tools/complete.tool.js';
import { toOpenAiTool } from './tools/index.js';
import type { ToolDefinition } from './tools/tool.js';
import { BUILTIN_TOOLS } from './tools/tool-registry.js';
import { CONTROL_TOOL_NAMES, type ControlToolName } from './tools/tool-traits.js';
import { buildTransitionTool } from './tools/transition.tool.js';

/** Every tool a worker offers, in table order; `extra` comes from the worker's configuration. */
export function jobToolDefinitions(extra: ToolDefinition[] = []): ToolDefinition[] {
  return [...BUILTIN_TOOLS, ...extra];
}

/** The wire form of each control tool; a piece without transition targets gets no transition tool. */
const CONTROL_WIRE_TOOLS: { readonly [N in ControlToolName]: (targets: string[]) => ChatTool | undefined } = {
  transition: (targets) => (targets.length ? buildTransitionTool(targets) : undefined),
  complete: () => completeTool,
};

export function buildJobTools(piece: Piece, definitions: ToolDefinition[] = jobToolDefinitions()): ChatTool[] {
  const targets = collectPieceTransitionTargets(piece).filter((t) => t !== 'COMPLETE' && t !== 'ABORT');
  const control = CONTROL_TOOL_NAMES.flatMap((name) => CONTROL_WIRE_TOOLS[name](targets) ?? []);
  return [...definitions.map(toOpenAiTool), ...control];
}
