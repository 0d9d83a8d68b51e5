// The schema and the repositories on the real Postgres wire protocol: embedded PGlite always, and a
// real PostgreSQL server too when DATABASE_URL is set (CI).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { JobEvent } from '../../core/job-events.js';
import type { Piece } from '../../core/types.js';
import { PIECE_DEFAULTS } from '../../core/piece-defaults.js';
import { createDatabase, destroyDatabase, migrateToLatest, type Db } from '../../db/database.js';
import { EmbeddedPostgresLockedError, startEmbeddedPostgres } from '../../db/embedded-postgres.js';
import {
  addComment,
  addEvent,
  finishMovementRun,
  getJob,
  getJobPiece,
  insertJob,
  JobNotFoundError,
  lastComments,
  listComments,
  listEvents,
  listJobs,
  listMovementRuns,
  startMovementRun,
  updateJobState,
} from '../../db/repositories/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.js';

const PIECE: Piece = {
  ...PIECE_DEFAULTS,
  name: 'tiny',
  initial_movement: 'plan',
  max_movements: 5,
  system_prompt: 'You are a test agent.',
  movements: [
    { name: 'plan', instruction: 'Plan.', allowed_tools: ['Read'], rules: [{ condition: 'done', next: 'build' }] },
    { name: 'build', instruction: 'Build "it" \u00e9\u00e8.', allowed_tools: [], rules: [], default_next: 'plan' },
  ],
};

const EXPECTED_COLUMNS: Record<string, string[]> = {
  jobs: [
    'id', 'parent_id', 'piece_name', 'piece', 'instruction', 'workspace', 'status', 'current_movement', 'wait_reason',
    'resume_movement', 'reason', 'summary', 'workflow_id', 'movement_count', 'created_at', 'updated_at', 'finished_at',
    'captcha_space_id', 'spawn_key', 'piece_hash',
  ],
  comments: ['id', 'job_id', 'author', 'body', 'created_at'],
  movement_runs: [
    'id', 'job_id', 'movement', 'sequence', 'status', 'next', 'summary', 'reason', 'iterations', 'llm_calls',
    'prompt_tokens', 'completion_tokens', 'total_tokens', 'started_at', 'finished_at',
  ],
  job_events: ['id', 'job_id', 'movement_run_id', 'type', 'data', 'created_at'],
  movement_messages: ['movement_run_id', 'idx', 'message'],
  movement_checkpoints: ['id', 'movement_run_id', 'message_count', 'state', 'created_at'],
  lessons: ['id', 'job_id', 'movement_run_id', 'idx', 'movement', 'text', 'created_at'],
  feedback: ['id', 'job_id', 'movement_run_id', 'from_movement', 'to_movement', 'text', 'created_at'],
  requests: ['id', 'job_id', 'kind', 'call_hash', 'args', 'reason', 'movement', 'status', 'note', 'result', 'created_at', 'decided_at'],
};

async function newJob(db: Db, over: { parentId?: string | null } = {}) {
  const id = randomUUID();
  return insertJob(db, {
    id,
    parentId: over.parentId ?? null,
    pieceName: PIECE.name,
    piece: PIECE,
    instruction: `do ${id}`,
    workspace: `/tmp/ws/${id}`,
    workflowId: `job-${id}`,
  });
}

const backends: Array<{ name: string; embedded: boolean }> = [{ name: 'embedded PGlite', embedded: true }];
if (process.env.DATABASE_URL) backends.push({ name: 'PostgreSQL at DATABASE_URL', embedded: false });

for (const backend of backends) {
  describe(`database on ${backend.name}`, () => {
    let t: TestDatabase;
    let db: Db;
    before(async () => {
      t = await createTestDatabase({ embedded: backend.embedded });
      db = t.db;
    });
    after(async () => {
      await t?.stop();
    });

    it('migrations create the tables and columns of db/schema.ts, and rerun as a no-op', async () => {
      const rows = await sql<{ table_name: string; column_name: string }>`
        select table_name, column_name from information_schema.columns
        where table_schema = current_schema() order by table_name, ordinal_position`.execute(db);
      for (const [table, columns] of Object.entries(EXPECTED_COLUMNS)) {
        const actual = rows.rows.filter((r) => r.table_name === table).map((r) => r.column_name);
        assert.deepEqual(actual, columns, `columns of ${table}`);
      }
      await migrateToLatest(db);
      const count = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(db);
      assert.ok(count.rows[0].n >= 1);
    });

    it('jobs: insert, get, piece round-trip', async () => {
      const job = await newJob(db);
      assert.equal(job.status, 'queued');
      assert.equal(job.piece, 'tiny');
      assert.equal(job.movementCount, 0);
      assert.equal(job.finishedAt, null);
      assert.match(job.createdAt, /^\d{4}-\d\d-\d\dT.*Z$/);
      assert.deepEqual(await getJob(db, job.id), job);
      assert.deepEqual(await getJobPiece(db, job.id), PIECE);
      assert.equal(await getJob(db, 'nope'), undefined);
      assert.equal(await getJobPiece(db, 'nope'), undefined);
    });

    it('jobs: listJobs is newest first and filters by status, parent and limit', async () => {
      const parent = await newJob(db);
      const a = await newJob(db, { parentId: parent.id });
      const b = await newJob(db, { parentId: parent.id });
      await updateJobState(db, b.id, { status: 'running' });
      const children = await listJobs(db, { parentId: parent.id });
      assert.deepEqual(children.map((j) => j.id), [b.id, a.id]);
      assert.deepEqual((await listJobs(db, { parentId: parent.id, status: ['running'] })).map((j) => j.id), [b.id]);
      assert.deepEqual(await listJobs(db, { status: [] }), []);
      const all = await listJobs(db);
      assert.equal(all[0].id, b.id);
      assert.ok(all.length >= 3);
      assert.equal((await listJobs(db, { limit: 2 })).length, 2);
    });

    it('jobs: updateJobState patches, sets updated_at, and finished_at once on a terminal status', async () => {
      const job = await newJob(db);
      await updateJobState(db, job.id, { status: 'waiting_human', currentMovement: 'plan', waitReason: 'question', resumeMovement: 'plan', movementCount: 2 });
      const parked = (await getJob(db, job.id))!;
      assert.equal(parked.status, 'waiting_human');
      assert.equal(parked.waitReason, 'question');
      assert.equal(parked.resumeMovement, 'plan');
      assert.equal(parked.movementCount, 2);
      assert.equal(parked.finishedAt, null);
      assert.ok(parked.updatedAt >= job.updatedAt);

      await updateJobState(db, job.id, { waitReason: null, resumeMovement: null });
      const cleared = (await getJob(db, job.id))!;
      assert.equal(cleared.waitReason, null);
      assert.equal(cleared.currentMovement, 'plan', 'fields not in the patch stay');

      await updateJobState(db, job.id, { status: 'completed', summary: 'all done' });
      const done = (await getJob(db, job.id))!;
      assert.equal(done.status, 'completed');
      assert.equal(done.summary, 'all done');
      assert.notEqual(done.finishedAt, null);
      assert.ok(done.finishedAt! >= done.createdAt);

      await updateJobState(db, job.id, { status: 'completed' });
      assert.equal((await getJob(db, job.id))!.finishedAt, done.finishedAt, 'a repeated terminal update keeps finished_at');

      await assert.rejects(updateJobState(db, 'missing-job', { status: 'failed' }), JobNotFoundError);
    });

    it('comments: oldest first; lastComments returns the last n, oldest first', async () => {
      const job = await newJob(db);
      const added = [];
      for (let i = 1; i <= 6; i++) added.push(await addComment(db, { jobId: job.id, author: i % 2 ? 'user' : 'agent', body: `c${i}` }));
      assert.equal(added[0].jobId, job.id);
      assert.equal(typeof added[0].id, 'number');
      assert.deepEqual((await listComments(db, job.id)).map((c) => c.body), ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
      assert.deepEqual((await lastComments(db, job.id, 3)).map((c) => c.body), ['c4', 'c5', 'c6']);
      assert.deepEqual((await lastComments(db, job.id, 10)).map((c) => c.body), ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
      assert.deepEqual(await lastComments(db, job.id, 0), []);
      assert.deepEqual(await listComments(db, 'other-job'), []);
      await assert.rejects(addComment(db, { jobId: 'no-such-job', author: 'user', body: 'x' }), /foreign key/i);
    });

    it('movement runs: start is idempotent, finish records the outcome, list in sequence order', async () => {
      const job = await newJob(db);
      const r1 = randomUUID();
      const r2 = randomUUID();
      await startMovementRun(db, { id: r2, jobId: job.id, movement: 'build', sequence: 2 });
      await startMovementRun(db, { id: r1, jobId: job.id, movement: 'plan', sequence: 1 });
      await finishMovementRun(db, r1, {
        status: 'failed', next: null, summary: 'crashed', reason: 'llm_error', iterations: 1, llmCalls: 1,
        usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
      });
      await startMovementRun(db, { id: r1, jobId: job.id, movement: 'plan', sequence: 1 }); // a retried attempt
      let runs = await listMovementRuns(db, job.id);
      assert.deepEqual(runs.map((r) => [r.id, r.status]), [[r1, 'running'], [r2, 'running']]);
      assert.equal(runs[0].finishedAt, null);

      await finishMovementRun(db, r1, {
        status: 'completed', next: 'build', summary: 'planned', iterations: 3, llmCalls: 4,
        usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 },
      });
      runs = await listMovementRuns(db, job.id);
      const r = runs[0];
      assert.deepEqual(
        { status: r.status, next: r.next, summary: r.summary, reason: r.reason, iterations: r.iterations, llmCalls: r.llmCalls },
        { status: 'completed', next: 'build', summary: 'planned', reason: null, iterations: 3, llmCalls: 4 },
      );
      assert.deepEqual([r.promptTokens, r.completionTokens, r.totalTokens], [100, 20, 120]);
      assert.notEqual(r.finishedAt, null);
      assert.ok(r.finishedAt! >= r.startedAt);
      assert.equal(runs[1].summary, null);
    });

    // The repository stores any data as given: these events are not the engine's (core/job-events.ts).
    const raw = (e: { type: string; data?: Record<string, unknown> }) => e as JobEvent;

    it('events: data round-trips, oldest first, paged with afterId and limit', async () => {
      const job = await newJob(db);
      const run = randomUUID();
      await startMovementRun(db, { id: run, jobId: job.id, movement: 'plan', sequence: 1 });
      const e1 = await addEvent(db, { jobId: job.id, ...raw({ type: 'job.submitted' }) });
      const e2 = await addEvent(db, { jobId: job.id, movementRunId: run, ...raw({ type: 'tool.call', data: { tool: 'Read', args: { path: 'a' }, ok: true, n: 1.5 } }) });
      const e3 = await addEvent(db, { jobId: job.id, ...raw({ type: 'job.status', data: { status: 'running' } }) });
      assert.deepEqual(e1.data, {});
      assert.equal(e1.movementRunId, null);
      assert.equal(e2.movementRunId, run);
      assert.ok(e1.id < e2.id && e2.id < e3.id);
      const all = await listEvents(db, job.id);
      assert.deepEqual(all.map((e) => e.type), ['job.submitted', 'tool.call', 'job.status']);
      assert.deepEqual(all[1].data, { tool: 'Read', args: { path: 'a' }, ok: true, n: 1.5 });
      assert.deepEqual((await listEvents(db, job.id, { afterId: e1.id })).map((e) => e.id), [e2.id, e3.id]);
      assert.deepEqual((await listEvents(db, job.id, { afterId: e1.id, limit: 1 })).map((e) => e.id), [e2.id]);
    });

    it('deleting a job cascades to its comments, runs and events', async () => {
      const job = await newJob(db);
      await addComment(db, { jobId: job.id, author: 'system', body: 'x' });
      await startMovementRun(db, { id: randomUUID(), jobId: job.id, movement: 'plan', sequence: 1 });
      await addEvent(db, { jobId: job.id, ...raw({ type: 'guard' }) });
      await db.deleteFrom('jobs').where('id', '=', job.id).execute();
      assert.deepEqual(await listComments(db, job.id), []);
      assert.deepEqual(await listMovementRuns(db, job.id), []);
      assert.deepEqual(await listEvents(db, job.id), []);
    });
  });
}

describe('embedded PGlite server', () => {
  it('is safe for several connections: interleaved extended-protocol queries and transactions', async () => {
    const pg = await startEmbeddedPostgres({});
    const db = createDatabase({ url: pg.url, poolSize: 4 });
    try {
      await migrateToLatest(db);
      const job = await newJob(db);
      const results = await Promise.all(
        Array.from({ length: 120 }, async (_, i) => {
          if (i % 10 === 0) {
            // Half of the transactions roll back; none of their rows may be seen from outside.
            return db
              .transaction()
              .execute(async (trx) => {
                await addComment(trx, { jobId: job.id, author: 'user', body: `tx${i}` });
                if (i % 20 === 0) throw new Error('rollback');
                return 'committed';
              })
              .catch((e: Error) => e.message);
          }
          const r = await sql<{ v: number; s: string }>`select ${i}::int as v, ${`s${i}`}::text as s`.execute(db);
          return r.rows[0].v === i && r.rows[0].s === `s${i}` ? 'ok' : `wrong ${JSON.stringify(r.rows)}`;
        }),
      );
      assert.deepEqual(results.filter((r) => !['ok', 'committed', 'rollback'].includes(r)), []);
      const bodies = (await listComments(db, job.id)).map((c) => c.body).sort();
      assert.deepEqual(bodies, ['tx10', 'tx110', 'tx30', 'tx50', 'tx70', 'tx90']);
    } finally {
      await destroyDatabase(db);
      await pg.stop();
    }
  });

  it('keeps data in dataDir across restarts and refuses a dataDir already in use', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-pgdata-'));
    const dataDir = path.join(dir, 'pgdata');
    try {
      const first = await startEmbeddedPostgres({ dataDir });
      await assert.rejects(startEmbeddedPostgres({ dataDir }), EmbeddedPostgresLockedError);
      let db = createDatabase({ url: first.url, poolSize: 1 });
      await migrateToLatest(db);
      const job = await newJob(db);
      await destroyDatabase(db);
      await first.stop();

      const second = await startEmbeddedPostgres({ dataDir });
      db = createDatabase({ url: second.url, poolSize: 1 });
      try {
        await migrateToLatest(db);
        assert.equal((await getJob(db, job.id))?.instruction, job.instruction);
      } finally {
        await destroyDatabase(db);
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
