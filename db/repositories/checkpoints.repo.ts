// Conversation checkpoints of movement runs. Messages are written once each; a retried attempt that
// resumed from an earlier checkpoint overwrites the messages after it.
import type { Db } from '../database.js';

export interface CheckpointView<M, S> {
  checkpointId: number;
  messages: M[];
  state: S;
}

export async function saveCheckpoint<M, S>(
  db: Db,
  runId: string,
  messages: M[],
  fromIndex: number,
  state: S,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const fresh = messages.slice(fromIndex);
    if (fresh.length) {
      await trx
        .insertInto('movement_messages')
        .values(fresh.map((m, i) => ({ movement_run_id: runId, idx: fromIndex + i, message: JSON.stringify(m) })))
        .onConflict((oc) => oc.columns(['movement_run_id', 'idx']).doUpdateSet((eb) => ({ message: eb.ref('excluded.message') })))
        .execute();
    }
    const row = await trx
      .insertInto('movement_checkpoints')
      .values({ movement_run_id: runId, message_count: messages.length, state: JSON.stringify(state) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  });
}

export async function loadLatestCheckpoint<M, S>(db: Db, runId: string): Promise<CheckpointView<M, S> | undefined> {
  const cp = await db
    .selectFrom('movement_checkpoints')
    .selectAll()
    .where('movement_run_id', '=', runId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!cp) return undefined;
  const rows = await db
    .selectFrom('movement_messages')
    .select(['message'])
    .where('movement_run_id', '=', runId)
    .where('idx', '<', cp.message_count)
    .orderBy('idx')
    .execute();
  return { checkpointId: Number(cp.id), messages: rows.map((r) => r.message as M), state: cp.state as S };
}
