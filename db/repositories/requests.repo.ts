// Approval requests. A request is bound to one call: its kind and a hash of the call's normalised
// arguments; a decision applies to that call alone (invariant: re-entry is idempotent).
import { createHash } from 'node:crypto';
import type { RequestKind, RequestStatus, RequestView } from '../../core/types.js';
import type { Db } from '../database.js';
import type { RequestsTable } from '../schema.js';
import { iso, isoOrNull, parseJson } from './row-mapping.js';
import type { Selectable } from 'kysely';

export class RequestNotFoundError extends Error {
  override name = 'RequestNotFoundError';
}

/** The request was decided (or expired) already: a second decision is refused (409). */
export class RequestNotPendingError extends Error {
  override name = 'RequestNotPendingError';
  constructor(readonly request: RequestView) {
    super(`request ${request.id} is ${request.status}, not pending`);
  }
}

/** Keys sorted, strings trimmed: the same call always hashes the same. */
export function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, normalise(v)]),
    );
  }
  return typeof value === 'string' ? value.trim() : value;
}

export function callHash(kind: RequestKind, binding: Record<string, unknown>): string {
  return createHash('sha256').update(`${kind}\n${JSON.stringify(normalise(binding))}`).digest('hex');
}

function toView(r: Selectable<RequestsTable>): RequestView {
  return {
    id: r.id,
    jobId: r.job_id,
    kind: r.kind as RequestKind,
    args: parseJson<Record<string, unknown>>(r.args),
    reason: r.reason,
    movement: r.movement,
    status: r.status as RequestStatus,
    note: r.note,
    result: r.result,
    createdAt: iso(r.created_at),
    decidedAt: isoOrNull(r.decided_at),
  };
}

export async function createRequest(
  db: Db,
  r: { id: string; jobId: string; kind: RequestKind; binding: Record<string, unknown>; args: Record<string, unknown>; reason: string; movement: string },
): Promise<RequestView> {
  const row = await db
    .insertInto('requests')
    .values({
      id: r.id,
      job_id: r.jobId,
      kind: r.kind,
      call_hash: callHash(r.kind, r.binding),
      args: JSON.stringify(r.args),
      reason: r.reason,
      movement: r.movement,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toView(row);
}

/** The latest request of the job for the same call. */
export async function findRequestForCall(db: Db, jobId: string, kind: RequestKind, binding: Record<string, unknown>): Promise<RequestView | undefined> {
  const row = await db
    .selectFrom('requests')
    .selectAll()
    .where('job_id', '=', jobId)
    .where('kind', '=', kind)
    .where('call_hash', '=', callHash(kind, binding))
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? toView(row) : undefined;
}

export async function getRequest(db: Db, id: string): Promise<RequestView | undefined> {
  const row = await db.selectFrom('requests').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toView(row) : undefined;
}

export async function listRequests(db: Db, jobId: string): Promise<RequestView[]> {
  const rows = await db.selectFrom('requests').selectAll().where('job_id', '=', jobId).orderBy('created_at').execute();
  return rows.map(toView);
}

/** Decides a pending request; throws RequestNotFoundError or RequestNotPendingError otherwise. */
export async function decideRequest(
  db: Db,
  id: string,
  d: { status: Extract<RequestStatus, 'approved' | 'declined' | 'expired'>; note?: string | null },
): Promise<RequestView> {
  const row = await db
    .updateTable('requests')
    .set({ status: d.status, note: d.note ?? null, decided_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  if (row) return toView(row);
  const existing = await getRequest(db, id);
  if (!existing) throw new RequestNotFoundError(`no request ${id}`);
  throw new RequestNotPendingError(existing);
}

export async function setRequestResult(db: Db, id: string, result: string): Promise<void> {
  await db.updateTable('requests').set({ result }).where('id', '=', id).execute();
}

/** Tools approved through RequestTool: allowed for the rest of the job. */
export async function grantedTools(db: Db, jobId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('requests')
    .select('args')
    .where('job_id', '=', jobId)
    .where('kind', '=', 'tool')
    .where('status', '=', 'approved')
    .execute();
  return [...new Set(rows.map((r) => String(parseJson<{ tool?: unknown }>(r.args).tool ?? '')).filter(Boolean))];
}
