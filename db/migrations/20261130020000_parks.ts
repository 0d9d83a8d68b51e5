// Parks: approval requests bound to one call (tool + normalised arguments hash), children
// deduplicated by a spawn key, and the captcha space a parked job waits on.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('call_hash', 'text', (c) => c.notNull())
    .addColumn('args', 'jsonb', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('movement', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('note', 'text')
    .addColumn('result', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('decided_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('requests_job_call_idx').on('requests').columns(['job_id', 'kind', 'call_hash']).execute();
  await db.schema.createIndex('requests_status_idx').on('requests').columns(['status']).execute();
  await db.schema.alterTable('jobs').addColumn('captcha_space_id', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('spawn_key', 'text').execute();
  await db.schema
    .createIndex('jobs_parent_spawn_key_unique')
    .on('jobs')
    .columns(['parent_id', 'spawn_key'])
    .unique()
    .where(sql.ref('spawn_key'), 'is not', null)
    .execute();
  await db.schema.createIndex('jobs_captcha_space_idx').on('jobs').columns(['captcha_space_id', 'status']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_captcha_space_idx').execute();
  await db.schema.dropIndex('jobs_parent_spawn_key_unique').execute();
  await db.schema.alterTable('jobs').dropColumn('spawn_key').execute();
  await db.schema.alterTable('jobs').dropColumn('captcha_space_id').execute();
  await db.schema.dropTable('requests').execute();
}
