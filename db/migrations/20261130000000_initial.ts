// The initial schema: exactly the tables and columns of db/schema.ts.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('parent_id', 'text')
    .addColumn('piece_name', 'text', (c) => c.notNull())
    .addColumn('piece', 'jsonb', (c) => c.notNull())
    .addColumn('instruction', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('current_movement', 'text')
    .addColumn('wait_reason', 'text')
    .addColumn('resume_movement', 'text')
    .addColumn('reason', 'text')
    .addColumn('summary', 'text')
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('movement_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('jobs_status_idx').on('jobs').column('status').execute();
  await db.schema.createIndex('jobs_parent_id_idx').on('jobs').column('parent_id').execute();
  await db.schema.createIndex('jobs_created_at_idx').on('jobs').column('created_at').execute();

  await db.schema
    .createTable('comments')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('author', 'text', (c) => c.notNull().check(sql`author in ('user', 'agent', 'system')`))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('comments_job_id_id_idx').on('comments').columns(['job_id', 'id']).execute();

  await db.schema
    .createTable('movement_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('movement', 'text', (c) => c.notNull())
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('next', 'text')
    .addColumn('summary', 'text')
    .addColumn('reason', 'text')
    .addColumn('iterations', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('llm_calls', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('prompt_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('movement_runs_job_id_sequence_idx')
    .on('movement_runs')
    .columns(['job_id', 'sequence'])
    .execute();

  await db.schema
    .createTable('job_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('movement_run_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('job_events_job_id_id_idx').on('job_events').columns(['job_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_events').ifExists().execute();
  await db.schema.dropTable('movement_runs').ifExists().execute();
  await db.schema.dropTable('comments').ifExists().execute();
  await db.schema.dropTable('jobs').ifExists().execute();
}
