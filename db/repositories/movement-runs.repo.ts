// One row per movement execution (a runMovement activity), with its outcome and token usage.
import type { TokenUsage } from '../../core/types.js';
import type { Db } from '../database.js';
import type { MovementRunRow } from '../schema.js';
import { dbNow, iso, isoOrNull } from './row-mapping.js';

export type MovementRunStatus = 'running' | 'completed' | 'failed' | 'aborted' | 'cancelled';

export interface MovementRunView {
  id: string;
  movement: string;
  sequence: number;
  status: MovementRunStatus;
  next: string | null;
  summary: string | null;
  reason: string | null;
  iterations: number;
  llmCalls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  startedAt: string;
  finishedAt: string | null;
}

export interface MovementRunOutcome {
  status: 'completed' | 'failed' | 'aborted';
  next: string | null;
  summary: string;
  reason?: string;
  iterations: number;
  llmCalls: number;
  usage: TokenUsage;
}

function toMovementRunView(r: MovementRunRow): MovementRunView {
  return {
    id: r.id,
    movement: r.movement,
    sequence: r.sequence,
    status: r.status as MovementRunStatus,
    next: r.next,
    summary: r.summary,
    reason: r.reason,
    iterations: r.iterations,
    llmCalls: r.llm_calls,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    totalTokens: r.total_tokens,
    startedAt: iso(r.started_at),
    finishedAt: isoOrNull(r.finished_at),
  };
}

/**
 * Idempotent on id: a retried activity attempt calls it again with the same id. The row keeps its
 * first started_at and goes back to 'running' (an earlier attempt may have recorded a failure).
 */
export async function startMovementRun(db: Db, r: { id: string; jobId: string; movement: string; sequence: number }): Promise<void> {
  await db
    .insertInto('movement_runs')
    .values({ id: r.id, job_id: r.jobId, movement: r.movement, sequence: r.sequence, status: 'running' })
    .onConflict((oc) => oc.column('id').doUpdateSet({ status: 'running', finished_at: null }))
    .execute();
}

export async function finishMovementRun(db: Db, id: string, r: MovementRunOutcome): Promise<void> {
  await db
    .updateTable('movement_runs')
    .set({
      status: r.status,
      next: r.next,
      summary: r.summary,
      reason: r.reason ?? null,
      iterations: r.iterations,
      llm_calls: r.llmCalls,
      prompt_tokens: r.usage.promptTokens,
      completion_tokens: r.usage.completionTokens,
      total_tokens: r.usage.totalTokens,
      finished_at: dbNow(),
    })
    .where('id', '=', id)
    .execute();
}

/** The attempt stopped on a cancellation; a retried attempt (startMovementRun) sets it running again. */
export async function markMovementRunCancelled(db: Db, id: string): Promise<void> {
  await db.updateTable('movement_runs').set({ status: 'cancelled', finished_at: dbNow() }).where('id', '=', id).where('status', '=', 'running').execute();
}

/** In execution order. */
export async function listMovementRuns(db: Db, jobId: string): Promise<MovementRunView[]> {
  const rows = await db
    .selectFrom('movement_runs')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('sequence', 'asc')
    .orderBy('started_at', 'asc')
    .execute();
  return rows.map(toMovementRunView);
}
