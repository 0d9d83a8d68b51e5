// The tools array of a job: the same bytes in every request of every movement (seeds 004: any change
// to the tools array invalidates the whole prompt cache). Permission per movement is checked at call time.
import type { Piece } from '../core/types.js';
import type { ChatTool } from './llm-client.js';
import { collectPieceTransitionTargets } from './piece/piece-targets.js';
import { completeTool } from './tools/complete.tool.js';
import { FILE_TOOLS, toOpenAiTool } from './tools/index.js';
import { buildTransitionTool } from './tools/transition.tool.js';

export function buildJobTools(piece: Piece): ChatTool[] {
  const targets = collectPieceTransitionTargets(piece).filter((t) => t !== 'COMPLETE' && t !== 'ABORT');
  const transition = targets.length ? [buildTransitionTool(targets)] : [];
  return [...FILE_TOOLS.map(toOpenAiTool), ...transition, completeTool];
}
