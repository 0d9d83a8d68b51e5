// The kysely handle on PostgreSQL (a real server, or embedded PGlite over the wire protocol).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Kysely, Migrator, PostgresDialect } from 'kysely';
import pg from 'pg';
import { passwordOfUrl, registerSecret } from '../core/redact.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Embedded PGlite URLs need poolSize 1 (see db/embedded-postgres.ts); a real server takes more.
 */
export function createDatabase(opts: { url: string; poolSize?: number }): Db {
  // Connection errors can quote the URL; whoever connects, its password is a secret.
  registerSecret(passwordOfUrl(opts.url));
  const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10, types: { getTypeParser } });
  // An idle client that loses its server emits 'error' on the pool; without a listener that
  // would crash the process. The next query reports the problem instead.
  pool.on('error', () => undefined);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

// int8 (count(*), bigserial) comes back as a string by default; our counts and ids fit a number.
// Per pool, so that other pg users in the process keep the library's defaults.
const getTypeParser = ((oid: number, format?: 'text' | 'binary') =>
  oid === pg.types.builtins.INT8 && format !== 'binary'
    ? (v: string) => Number(v)
    : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser;

export async function destroyDatabase(db: Db): Promise<void> {
  await db.destroy();
}

export function migrationsDir(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
}

export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: migrationsDir() }),
  });
  let result;
  try {
    result = await migrator.migrateToLatest();
  } catch (err) {
    throw new MigrationError(`database migration failed: ${(err as Error).message}`, { cause: err });
  }
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    const cause = result.error;
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new MigrationError(`database migration ${failed ?? '(unknown)'} failed: ${why}`, { cause });
  }
}
