// The content hash that identifies the piece frozen in a job row. Canonical JSON (object keys
// sorted, no whitespace, undefined members dropped) so the hash of the piece as submitted equals the
// hash of the same piece read back from a jsonb column, which does not keep key order.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    // JSON.stringify turns a bare undefined/function into undefined: treat it as null, like arrays do.
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** sha256 (hex) of the piece's canonical JSON. */
export function hashPiece(piece: unknown): string {
  return createHash('sha256').update(canonicalJson(piece)).digest('hex');
}
