// Pure decision function of the piece runner (docs/architecture.md, the path of a job): given what a
// movement returned, where does the job go next? Kept free of Temporal APIs so unit tests cover every branch.
import type { JobStatus, MovementResult, Piece, WaitReason } from '../core/types.js';
import { applyAskLimit, type AskCounters } from './ask-limit.js';

export type MovementDecision =
  | { kind: 'next'; movement: string }
  | { kind: 'done'; status: Extract<JobStatus, 'completed' | 'aborted' | 'failed'>; reason?: string }
  | {
      kind: 'park';
      status: Extract<JobStatus, 'waiting_human' | 'waiting_subtasks'>;
      waitReason: WaitReason;
      resumeMovement: string;
    };

export interface RunState {
  /** Movements run so far, including the one that produced this result. */
  movementCount: number;
}

export function mapMovementResult(result: MovementResult, piece: Piece, state: RunState): MovementDecision {
  const decision = decide(result, piece, state);
  // A resume runs a movement again, so it counts like a transition: max_movements bounds every loop,
  // including one that keeps parking (e.g. an approval that expires and is asked for again).
  if (decision.kind === 'park' && state.movementCount >= piece.max_movements) {
    return { kind: 'done', status: 'aborted', reason: 'max_movements' };
  }
  return decision;
}

/** A step of the job: a movement decision, or the movement just run again with the engine's note. */
export type StepDecision = MovementDecision | { kind: 'again'; note: string };

export interface StepState extends RunState, AskCounters {}

/**
 * The whole decision after a movement, for the workflow to apply: where the job goes and the ask
 * counters from now on. A question first passes max_movements (mapMovementResult), then the ask limit.
 */
export function decideStep(result: MovementResult, piece: Piece, state: StepState): { decision: StepDecision; counters: AskCounters } {
  const decision = mapMovementResult(result, piece, state);
  const counters: AskCounters = { asks: state.asks, askDeflections: state.askDeflections };
  if (decision.kind !== 'park' || decision.waitReason !== 'question') return { decision, counters };
  const limited = applyAskLimit(piece, counters);
  switch (limited.decision.kind) {
    case 'park':
      return { decision, counters: limited.counters };
    case 'again':
      // No park: the movement that asked runs again and must decide by itself.
      return { decision: { kind: 'again', note: limited.decision.note }, counters: limited.counters };
    case 'done':
      return { decision: limited.decision, counters: limited.counters };
  }
}

function decide(result: MovementResult, piece: Piece, state: RunState): MovementDecision {
  const current = piece.movements.find((m) => m.name === result.movement);
  const next = result.next;
  switch (next) {
    case null:
      return { kind: 'done', status: 'failed', reason: result.reason ?? 'the movement ended without a transition' };
    case 'COMPLETE':
      return { kind: 'done', status: 'completed' };
    case 'ABORT':
      return { kind: 'done', status: 'aborted', reason: result.reason ?? 'aborted' };
    case 'ASK':
      return park('waiting_human', result.waitReason ?? 'question', result.resumeMovement ?? result.movement);
    case 'WAITING_HUMAN_BROWSER':
      return park('waiting_human', result.waitReason ?? 'browser_login', result.resumeMovement ?? result.movement);
    case 'WAITING_HUMAN_TOOL_REQUEST':
      return park('waiting_human', result.waitReason ?? 'tool_request', result.resumeMovement ?? result.movement);
    case 'WAITING_HUMAN_SPAWN_REQUEST':
      return park('waiting_human', 'spawn_request', result.resumeMovement ?? result.movement);
    case 'WAIT_SUBTASKS': {
      // Reached through a rule, the job resumes at default_next; the WaitSubTask tool
      // sets resumeMovement to the current movement instead.
      const resume = result.resumeMovement ?? current?.default_next;
      if (!resume || !piece.movements.some((m) => m.name === resume)) {
        return { kind: 'done', status: 'failed', reason: `WAIT_SUBTASKS from "${result.movement}" has no movement to resume` };
      }
      return park('waiting_subtasks', 'subtasks', resume);
    }
    default: {
      if (!piece.movements.some((m) => m.name === next)) {
        return { kind: 'done', status: 'failed', reason: `unknown next movement "${next}"` };
      }
      if (state.movementCount >= piece.max_movements) {
        return { kind: 'done', status: 'aborted', reason: 'max_movements' };
      }
      return { kind: 'next', movement: next };
    }
  }
}

function park(
  status: 'waiting_human' | 'waiting_subtasks',
  waitReason: WaitReason,
  resumeMovement: string,
): MovementDecision {
  return { kind: 'park', status, waitReason, resumeMovement };
}
