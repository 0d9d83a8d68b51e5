// Shared helpers for turning rows into the camelCase views the API and engine use.
import { sql, type RawBuilder } from 'kysely';

// schema.ts types timestamps as Generated<ColumnType<Date, ...>>, which kysely's Selectable does not
// unwrap; at run time pg gives a Date (timestamptz), so accept what the type system claims.
type TimestampValue = Date | string | { __select__: Date };

export function iso(d: TimestampValue): string {
  return (d instanceof Date ? d : new Date(d as string)).toISOString();
}

export function isoOrNull(d: TimestampValue | null): string | null {
  return d === null ? null : iso(d);
}

/** jsonb arrives parsed from pg; a string here means it was stored as a JSON string literal. */
export function parseJson<T>(v: unknown): T {
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

/** The server's now() for SET clauses, typed to fit any timestamp column (see TimestampValue). */
export function dbNow(): RawBuilder<never> {
  return sql<never>`now()`;
}

/** coalesce(column, now()): a timestamp set once and then kept. */
export function dbNowIfNull(column: string): RawBuilder<never> {
  return sql<never>`coalesce(${sql.ref(column)}, now())`;
}
