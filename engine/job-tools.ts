// The tools of a job: their definitions (what runs) and their wire form (what the model sees). The
// wire form is the same bytes in every request of every movement (seeds 004: any change to the
// tools array invalidates the whole prompt cache). Permission per movement is checked at call time.
import type { Piece } from '../core/types.js';
import type { ChatTool } from './llm-client.js';
import { collectPieceTransitionTargets } from './piece/piece-targets.js';
import { completeTool } from './tools/complete.tool.js';
import { FILE_TOOLS, toOpenAiTool } from './tools/index.js';
import { PARK_TOOLS } from './tools/park-tools.js';
import type { ToolDefinition } from './tools/tool.js';
import { buildTransitionTool } from './tools/transition.tool.js';

/** Every tool a worker offers, in a fixed order; `extra` comes from the worker's configuration. */
export function jobToolDefinitions(extra: ToolDefinition[] = []): ToolDefinition[] {
  return [...FILE_TOOLS, ...PARK_TOOLS, ...extra];
}

export function buildJobTools(piece: Piece, definitions: ToolDefinition[] = jobToolDefinitions()): ChatTool[] {
  const targets = collectPieceTransitionTargets(piece).filter((t) => t !== 'COMPLETE' && t !== 'ABORT');
  const transition = targets.length ? [buildTransitionTool(targets)] : [];
  return [...definitions.map(toOpenAiTool), ...transition, completeTool];
}
