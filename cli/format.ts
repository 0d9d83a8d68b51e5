// Plain-text rendering for the CLI's read commands (the --json variants print the API objects as they are).
import type { StoredJobEvent } from '../core/job-events.js';
import type { RequestView } from '../core/types.js';
import type { ApiComment, ApiEvent, ApiJob, ApiJobDetail } from './api-client.js';

export function oneLine(s: string | null | undefined, max = 80): string {
  const flat = (s ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 3))}...` : flat;
}

/** "3s ago", "5m ago", "2h ago", "4d ago": enough to scan a table. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(headers), ...rows.map(fmt)].join('\n');
}

export function statusText(job: Pick<ApiJob, 'status' | 'waitReason'>): string {
  return job.waitReason && job.status.startsWith('waiting') ? `${job.status} (${job.waitReason})` : job.status;
}

export function formatJobsTable(jobs: ApiJob[], now = Date.now()): string {
  if (jobs.length === 0) return 'no jobs';
  return table(
    ['ID', 'STATUS', 'PIECE', 'MOVEMENT', 'UPDATED', 'INSTRUCTION'],
    jobs.map((j) => [j.id, statusText(j), j.piece, j.currentMovement ?? '-', ago(j.updatedAt, now), oneLine(j.instruction, 50)]),
  );
}

/** What a request asks for, in a few words: "tool Bash", "pip six==1.16.0", "subtask in /srv/other". */
export function requestWhat(r: Pick<RequestView, 'kind' | 'args'>): string {
  const a = r.args;
  if (r.kind === 'tool') return `tool ${String(a.tool ?? '?')}`;
  if (r.kind === 'package') return `${String(a.manager ?? '?')} ${String(a.name ?? '?')}${a.version ? `@${String(a.version)}` : ''}`;
  return `subtask in ${String(a.workspace ?? '?')}: ${oneLine(String(a.instruction ?? ''), 40)}`;
}

/** GET /api/jobs/:id also carries the job's approval requests. */
export function formatJobDetail(job: ApiJobDetail & { requests?: RequestView[] }, comments: ApiComment[], now = Date.now()): string {
  const lines = [
    `job        ${job.id}`,
    `status     ${statusText(job)}`,
    `piece      ${job.piece}`,
    `movement   ${job.currentMovement ?? '-'}${job.resumeMovement ? ` (resumes at ${job.resumeMovement})` : ''}`,
    `workspace  ${job.workspace}`,
    `created    ${job.createdAt} (${ago(job.createdAt, now)})`,
    `updated    ${job.updatedAt} (${ago(job.updatedAt, now)})`,
  ];
  if (job.finishedAt) lines.push(`finished   ${job.finishedAt}`);
  if (job.parentId) lines.push(`parent     ${job.parentId}`);
  if (job.reason) lines.push(`reason     ${job.reason}`);
  if (job.summary) lines.push(`summary    ${oneLine(job.summary, 200)}`);
  lines.push('', 'instruction', indent(job.instruction.length > 2000 ? `${job.instruction.slice(0, 2000)}...` : job.instruction));
  lines.push('', `movements (${job.movements.length})`);
  if (job.movements.length === 0) lines.push('  none yet');
  else {
    const rows = job.movements.map((m) => [
      `#${m.sequence}`,
      m.movement,
      m.status,
      m.next ?? '-',
      String(m.iterations),
      String(m.totalTokens),
      oneLine(m.reason ? `${m.reason}: ${m.summary ?? ''}` : m.summary, 60),
    ]);
    lines.push(indent(table(['SEQ', 'MOVEMENT', 'STATUS', 'NEXT', 'ITER', 'TOKENS', 'SUMMARY'], rows)));
  }
  const requests = job.requests ?? [];
  if (requests.length > 0) {
    lines.push('', `requests (${requests.length})`);
    const rows = requests.map((r) => [r.id, r.kind, requestWhat(r), r.status, oneLine(r.reason, 40), oneLine(r.note, 40) || '-']);
    lines.push(indent(table(['ID', 'KIND', 'WHAT', 'STATUS', 'REASON', 'NOTE'], rows)));
    if (requests.some((r) => r.status === 'pending')) lines.push('  decide: maestro approve|decline REQUEST_ID [--note TEXT]');
  }
  const last = comments.slice(-5);
  lines.push('', `comments (${comments.length}${comments.length > last.length ? `, last ${last.length}` : ''})`);
  if (last.length === 0) lines.push('  none');
  for (const c of last) lines.push(`  [${c.createdAt}] ${c.author}: ${oneLine(c.body, 300)}`);
  return lines.join('\n');
}

function indent(s: string, by = '  '): string {
  return s
    .split('\n')
    .map((l) => by + l)
    .join('\n');
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** One line for the events `maestro run --follow` shows; undefined for events it does not show. */
export function formatFollowEvent(e: Pick<ApiEvent, 'type' | 'data'>): string | undefined {
  // The API serves the stored JSON unchecked: narrow on the type, and expect any field to be missing.
  const ev = e as StoredJobEvent;
  switch (ev.type) {
    case 'movement.started':
      return `> ${seqOf(ev.data)}${str(ev.data.movement) ?? '?'} started`;
    case 'movement.finished': {
      const d = ev.data;
      const next = str(d.next) ? ` -> ${d.next}` : '';
      const reason = str(d.reason) ? ` [${d.reason}]` : '';
      const summary = str(d.summary) ? `: ${oneLine(d.summary, 160)}` : '';
      return `< ${seqOf(d)}${str(d.movement) ?? '?'} finished${next}${reason}${summary}`;
    }
    case 'job.status': {
      const status = str(ev.data.status);
      if (!status) return undefined;
      const why = str(ev.data.waitReason) ?? str(ev.data.reason);
      return `= job ${status}${why ? ` (${oneLine(why, 160)})` : ''}`;
    }
    default: {
      const detail = formatProgressEvent(ev);
      return detail ? `    ${detail}` : undefined;
    }
  }
}

function seqOf(d: { sequence?: unknown }): string {
  return typeof d.sequence === 'number' ? `#${d.sequence} ` : '';
}

/** The agent loop's progress inside a movement: LLM calls, tool calls, thresholds, guards, retries. */
function formatProgressEvent(ev: StoredJobEvent): string | undefined {
  switch (ev.type) {
    case 'llm.call': {
      const d = ev.data;
      const tokens = typeof d.promptTokens === 'number' ? `${d.promptTokens} prompt tokens` : 'no usage reported';
      const ctx = typeof d.contextRatio === 'number' ? `, context ${Math.round(d.contextRatio * 100)}%` : '';
      return `· llm #${d.iteration}: ${tokens}${ctx}, ${d.durationMs} ms`;
    }
    case 'tool.call': {
      const d = ev.data;
      const flags = [d.isError ? 'error' : '', d.truncated ? 'cut to budget' : ''].filter(Boolean).join(', ');
      return `· ${d.name} ${oneLine(String(d.arguments ?? ''), 100)} (${d.durationMs} ms${flags ? `, ${flags}` : ''})`;
    }
    case 'context.threshold':
      return `! context ${Math.round(Number(ev.data.ratio) * 100)}% full: ${ev.data.action}`;
    case 'guard':
      return `! ${ev.data.kind} ${ev.data.count}/${ev.data.limit}`;
    case 'llm.retry':
      return `! LLM request failed (${ev.data.status ?? 'network'}): retrying in ${ev.data.delayMs} ms`;
    case 'transition.invalid':
      return `! invalid transition: ${oneLine(String(ev.data.error ?? ''), 160)}`;
    case 'movement.resumed':
      return `↻ resumed from checkpoint ${ev.data.checkpointId} (iteration ${ev.data.iteration})`;
    default:
      return undefined;
  }
}

export function formatFinalJob(job: ApiJob): string {
  const tail = job.summary ? `: ${oneLine(job.summary, 300)}` : job.reason ? `: ${oneLine(job.reason, 300)}` : '';
  return `job ${job.id} ${job.status}${tail}`;
}

/** A failure the CLI reports as one line on stderr; exitCode 2 means bad usage. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
