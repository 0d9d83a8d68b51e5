// What a movement keeps and passes on: conversation checkpoints (messages stored once each,
// append-only per run; a checkpoint names how many of them plus the loop state a retried attempt
// resumes from), lessons for later movements, and verify feedback addressed to a movement.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('movement_messages')
    .addColumn('movement_run_id', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    // json, not jsonb: the text is kept as written, so a resumed request is byte-identical to the
    // original one (jsonb reorders keys, which would change what the LLM server sees).
    .addColumn('message', 'json', (c) => c.notNull())
    .addPrimaryKeyConstraint('movement_messages_pk', ['movement_run_id', 'idx'])
    .execute();
  await db.schema
    .createTable('movement_checkpoints')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('movement_run_id', 'text', (c) => c.notNull())
    .addColumn('message_count', 'integer', (c) => c.notNull())
    .addColumn('state', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('movement_checkpoints_run_idx')
    .on('movement_checkpoints')
    .columns(['movement_run_id', 'id'])
    .execute();
  await db.schema
    .createTable('lessons')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('movement_run_id', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('movement', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('lessons_run_idx_unique', ['movement_run_id', 'idx'])
    .execute();
  await db.schema.createIndex('lessons_job_idx').on('lessons').columns(['job_id', 'id']).execute();
  await db.schema
    .createTable('feedback')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('movement_run_id', 'text', (c) => c.notNull().unique())
    .addColumn('from_movement', 'text', (c) => c.notNull())
    .addColumn('to_movement', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('feedback_job_to_idx').on('feedback').columns(['job_id', 'to_movement', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('feedback').execute();
  await db.schema.dropTable('lessons').execute();
  await db.schema.dropTable('movement_checkpoints').execute();
  await db.schema.dropTable('movement_messages').execute();
}
