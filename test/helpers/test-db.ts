// A fresh, migrated database per test (file): a throwaway database on DATABASE_URL's server when
// it is set (CI runs that way against a real PostgreSQL), else an in-memory embedded PGlite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabase, destroyDatabase, migrateToLatest, type Db } from '../../db/database.js';
import { startEmbeddedPostgres } from '../../db/embedded-postgres.js';

export interface TestDatabase {
  db: Db;
  url: string;
  /** 'postgres' when DATABASE_URL was used, 'embedded' for PGlite. */
  kind: 'postgres' | 'embedded';
  stop(): Promise<void>;
}

export async function createTestDatabase(opts: { embedded?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl && opts.embedded !== true) return createOnServer(serverUrl);
  const embedded = await startEmbeddedPostgres({});
  const db = createDatabase({ url: embedded.url, poolSize: 1 });
  try {
    await migrateToLatest(db);
  } catch (err) {
    await destroyDatabase(db);
    await embedded.stop();
    throw err;
  }
  return {
    db,
    url: embedded.url,
    kind: 'embedded',
    async stop() {
      await destroyDatabase(db);
      await embedded.stop();
    },
  };
}

async function createOnServer(serverUrl: string): Promise<TestDatabase> {
  const name = `maestro_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = createDatabase({ url: url.toString(), poolSize: 5 });
  const drop = async () => {
    await destroyDatabase(db);
    // WITH (FORCE): a worker in a child process may still hold a connection (PostgreSQL >= 13).
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    await migrateToLatest(db);
  } catch (err) {
    await drop();
    throw err;
  }
  return { db, url: url.toString(), kind: 'postgres', stop: drop };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
