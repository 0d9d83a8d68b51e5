// The ask limit (pure): past max_asks a question does not park; the same movement runs again with a
// note telling the model to decide by itself, and after MAX_ASK_LIMIT_DEFLECTIONS such runs the next
// question ends the job. Kept apart from the workflow so unit tests cover every branch.
import { MAX_ASK_LIMIT_DEFLECTIONS, type Piece } from '../core/types.js';

/** The job's ask counters; they travel through continue-as-new in the resume state. */
export interface AskCounters {
  /** Questions the job's movements asked so far (parked or deflected). */
  asks: number;
  /** Over-limit questions answered with a note instead of a park. */
  askDeflections: number;
}

export type AskLimitDecision =
  | { kind: 'park' }
  | { kind: 'again'; note: string }
  | { kind: 'done'; status: 'aborted'; reason: 'ask_limit_reached' };

/** What to do with a question the movement wants to park on, and the counters after it. */
export function applyAskLimit(piece: Piece, counters: AskCounters): { decision: AskLimitDecision; counters: AskCounters } {
  const asks = counters.asks + 1;
  if (asks <= piece.max_asks) return { decision: { kind: 'park' }, counters: { ...counters, asks } };
  if (counters.askDeflections >= MAX_ASK_LIMIT_DEFLECTIONS) {
    return { decision: { kind: 'done', status: 'aborted', reason: 'ask_limit_reached' }, counters: { ...counters, asks } };
  }
  return {
    decision: { kind: 'again', note: askLimitNote(piece.max_asks) },
    counters: { asks, askDeflections: counters.askDeflections + 1 },
  };
}

export function askLimitNote(maxAsks: number): string {
  return (
    `You have already asked the person ${maxAsks} questions, the limit for this job. Do not ask again: ` +
    'decide by yourself with what you know, say which assumptions you made, and go on.'
  );
}
