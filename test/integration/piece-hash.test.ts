// The piece's content hash (issue 7): canonical, so the hash of the submitted piece is the hash of the
// piece read back from jsonb; stored by insertJob; and filled in by the migration for older rows.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FileMigrationProvider, Migrator } from 'kysely';
import { migrateToLatest, migrationsDir } from '../../db/database.js';
import { getJobPieceRecord, insertJob } from '../../db/repositories/index.js';
import { canonicalJson, hashPiece } from '../../engine/piece/piece-hash.js';
import { resolvePiece } from '../../engine/piece/piece-loader.js';
import type { Piece } from '../../core/types.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.js';

describe('piece hash', () => {
  let database: TestDatabase;
  let piece: Piece;
  before(async () => {
    database = await createTestDatabase();
    piece = (await resolvePiece('develop')).piece;
  });
  after(async () => database?.stop());

  test('canonical JSON: key order and undefined members do not matter, values do', () => {
    assert.equal(canonicalJson({ b: 1, a: [1, { d: 2, c: undefined, e: 'x' }] }), '{"a":[1,{"d":2,"e":"x"}],"b":1}');
    assert.equal(hashPiece({ b: 1, a: 2 }), hashPiece({ a: 2, b: 1 }));
    assert.notEqual(hashPiece({ ...piece, system_prompt: `${piece.system_prompt} ` }), hashPiece(piece));
    assert.match(hashPiece(piece), /^[0-9a-f]{64}$/);
  });

  test('insertJob stores the hash; the piece read back from jsonb has the same hash', async () => {
    const job = await insertJob(database.db, { id: 'hash-1', pieceName: piece.name, piece, instruction: 'x', workspace: '/tmp/x', workflowId: 'job-hash-1' });
    const record = await getJobPieceRecord(database.db, job.id);
    assert.equal(record?.pieceHash, hashPiece(piece));
    assert.equal(hashPiece(record?.piece), record?.pieceHash, 'jsonb reorders keys; the canonical hash does not change');
    assert.equal(record?.workflowId, 'job-hash-1');
  });

  test('the migration fills in the hash of rows written before it', async () => {
    const migrator = new Migrator({ db: database.db, provider: new FileMigrationProvider({ fs, path, migrationFolder: migrationsDir() }) });
    const down = await migrator.migrateTo('20261130020000_parks');
    assert.equal(down.error, undefined, String(down.error));
    await database.db
      .insertInto('jobs')
      .values({ id: 'old-1', piece_name: piece.name, piece: JSON.stringify(piece), instruction: 'x', workspace: '/tmp/x', status: 'waiting_human', workflow_id: 'job-old-1' } as never)
      .execute();
    await migrateToLatest(database.db);
    const record = await getJobPieceRecord(database.db, 'old-1');
    assert.equal(record?.pieceHash, hashPiece(piece));
  });
});
