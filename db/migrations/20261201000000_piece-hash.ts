// Issue 7: the job row holds the piece AND its content hash; workflows carry ids and the hash only,
// and the worker runs the piece stored here once the hash matches. Rows written before this
// migration get the hash of the piece they already hold.
import type { Kysely } from 'kysely';
import { hashPiece } from '../../engine/piece/piece-hash.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('piece_hash', 'text').execute();
  const rows = (await db.selectFrom('jobs').select(['id', 'piece']).execute()) as Array<{ id: string; piece: unknown }>;
  for (const row of rows) {
    const piece = typeof row.piece === 'string' ? JSON.parse(row.piece) : row.piece;
    await db.updateTable('jobs').set({ piece_hash: hashPiece(piece) }).where('id', '=', row.id).execute();
  }
  await db.schema.alterTable('jobs').alterColumn('piece_hash', (c) => c.setNotNull()).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('piece_hash').execute();
}
