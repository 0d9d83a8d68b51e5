// Transition targets of a piece. Pure (no Node imports): the workflow bundle and the agent loop
// both use it, the latter to build the one piece-wide transition tool (invariant: byte-stable prompt
// prefix; the tools array must not change between movements, or the LLM's prompt cache is lost on every transition).
import { RULE_SENTINELS, SENTINELS, type Piece, type PieceMovement, type Sentinel } from '../../core/types.js';

const sentinelNames: readonly string[] = SENTINELS;
const ruleSentinelNames: readonly string[] = RULE_SENTINELS;

export function isSentinel(value: string): value is Sentinel {
  return sentinelNames.includes(value);
}

/** A value the transition tool may offer: a movement name or WAIT_SUBTASKS, never another sentinel. */
export function isTransitionTarget(value: string): boolean {
  return !isSentinel(value) || ruleSentinelNames.includes(value);
}

/**
 * Where one movement may go with the transition tool: rules[].next then default_next, deduplicated
 * in that order. COMPLETE / ABORT as default_next are left out: they are reached with the complete
 * tool or by the engine (a forced transition), never chosen through transition.
 */
export function movementTargets(movement: PieceMovement): string[] {
  const out: string[] = [];
  const add = (target: string | undefined) => {
    if (target !== undefined && isTransitionTarget(target) && !out.includes(target)) out.push(target);
  };
  for (const rule of movement.rules) add(rule.next);
  add(movement.default_next);
  return out;
}

/** The enum of the piece-wide transition tool: the union of movementTargets over all movements, sorted. */
export function collectPieceTransitionTargets(piece: Piece): string[] {
  const all = new Set<string>();
  for (const movement of piece.movements) for (const target of movementTargets(movement)) all.add(target);
  return [...all].sort();
}
