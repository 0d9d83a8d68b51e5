// Graph checks the schema cannot express: targets exist, sentinels stay out of rules, every
// movement is reachable. It reads the raw parsed YAML defensively (skipping what the schema will
// already report), so one run of the loader reports schema and graph problems together.
// Pure: no Node imports.
import { RULE_SENTINELS } from '../../core/types.js';
import { isSentinel } from './piece-targets.js';
import { PIECE_DEFAULTS, THRESHOLD_ORDER } from './piece.schema.js';

export type PiecePath = Array<string | number>;

export interface PieceLintIssue {
  /** Where in the document the problem is, e.g. ['movements', 1, 'rules', 0, 'next']. */
  path: PiecePath;
  /** The movement the problem belongs to, when it belongs to one. */
  movement: string | null;
  message: string;
}

const ruleSentinelNames: readonly string[] = RULE_SENTINELS;
const DEFAULT_NEXT_SENTINELS = ['COMPLETE', 'ABORT'];

/** Why a sentinel may not be a rule target, phrased for the piece author. */
const SENTINEL_ORIGIN: Record<string, string> = {
  COMPLETE: 'COMPLETE is reached with the complete tool, not a rule',
  ABORT: 'ABORT is set by the engine (guards, cancellation) or by complete({status: "failed"}), not a rule',
  ASK: 'ASK is reached with complete({status: "needs_user_input", question}), not a rule',
  WAITING_HUMAN_BROWSER: 'WAITING_HUMAN_BROWSER is set by the BrowseWeb tool, not a rule',
  WAITING_HUMAN_TOOL_REQUEST: 'WAITING_HUMAN_TOOL_REQUEST is set by the RequestTool / RequestPackage tools, not a rule',
  WAITING_HUMAN_SPAWN_REQUEST: 'WAITING_HUMAN_SPAWN_REQUEST is set by the SpinOffTask tool, not a rule',
};

interface RawMovement {
  index: number;
  name: string | null;
  rules: Array<{ index: number; next: string | null }>;
  defaultNext: string | null;
}

const asString = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
const asRecord = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

function readMovements(raw: Record<string, unknown>): RawMovement[] {
  if (!Array.isArray(raw.movements)) return [];
  return raw.movements.map((m, index) => {
    const rec = asRecord(m) ?? {};
    const rules = Array.isArray(rec.rules)
      ? rec.rules.map((r, i) => ({ index: i, next: asString(asRecord(r)?.next) }))
      : [];
    return { index, name: asString(rec.name), rules, defaultNext: asString(rec.default_next) };
  });
}

export function lintPiece(raw: unknown): PieceLintIssue[] {
  const piece = asRecord(raw);
  if (!piece) return [];
  const issues: PieceLintIssue[] = [];
  const movements = readMovements(piece);
  const names = new Set<string>();
  const byName = new Map<string, RawMovement>();

  for (const m of movements) {
    if (m.name === null) continue;
    if (names.has(m.name)) {
      issues.push({
        path: ['movements', m.index, 'name'],
        movement: m.name,
        message: `duplicate movement name "${m.name}": another movement already has it, names must be unique`,
      });
      continue;
    }
    names.add(m.name);
    byName.set(m.name, m);
  }
  const known = [...names].join(', ') || '(none)';

  for (const m of movements) {
    for (const rule of m.rules) {
      if (rule.next === null) continue;
      const path = ['movements', m.index, 'rules', rule.index, 'next'];
      const field = `rules[${rule.index}].next`;
      if (ruleSentinelNames.includes(rule.next)) {
        if (m.defaultNext === null) {
          issues.push({
            path,
            movement: m.name,
            message: `${field} is WAIT_SUBTASKS but the movement has no default_next: the job resumes at default_next once the subtasks finish`,
          });
        }
      } else if (isSentinel(rule.next)) {
        issues.push({
          path,
          movement: m.name,
          message: `${field} is the sentinel ${rule.next}, but rules may only name movements or WAIT_SUBTASKS: ${SENTINEL_ORIGIN[rule.next]}`,
        });
      } else if (!names.has(rule.next)) {
        issues.push({
          path,
          movement: m.name,
          message: `${field} "${rule.next}" is not a movement of this piece (movements: ${known})`,
        });
      }
    }
    const dn = m.defaultNext;
    if (dn !== null && !names.has(dn) && !DEFAULT_NEXT_SENTINELS.includes(dn)) {
      issues.push({
        path: ['movements', m.index, 'default_next'],
        movement: m.name,
        message: `default_next "${dn}" is not a movement of this piece; it must be a movement name, COMPLETE or ABORT (movements: ${known})`,
      });
    }
  }

  const initial = asString(piece.initial_movement);
  if (initial !== null && !names.has(initial)) {
    issues.push({
      path: ['initial_movement'],
      movement: null,
      message: `initial_movement "${initial}" is not a movement of this piece (movements: ${known})`,
    });
  } else if (initial !== null) {
    const reached = reachableFrom(initial, byName);
    for (const [name, m] of byName) {
      if (reached.has(name)) continue;
      issues.push({
        path: ['movements', m.index, 'name'],
        movement: name,
        message: `unreachable: no path of rules[].next / default_next leads here from initial_movement "${initial}"`,
      });
    }
  }
  issues.push(...thresholdIssues(piece.context_thresholds));
  return issues;
}

/** warn < prompt < force_transition < exhausted, after defaults; blamed on a key the author wrote. */
function thresholdIssues(raw: unknown): PieceLintIssue[] {
  const given = asRecord(raw);
  if (!given) return [];
  const value = (k: (typeof THRESHOLD_ORDER)[number]) => {
    const v = given[k];
    return v === undefined ? PIECE_DEFAULTS.context_thresholds[k] : v;
  };
  const issues: PieceLintIssue[] = [];
  for (let i = 1; i < THRESHOLD_ORDER.length; i++) {
    const lower = THRESHOLD_ORDER[i - 1];
    const upper = THRESHOLD_ORDER[i];
    const lo = value(lower);
    const hi = value(upper);
    if (typeof lo !== 'number' || typeof hi !== 'number' || hi > lo) continue;
    const blamed = upper in given ? upper : lower;
    const note = (k: string) => (k in given ? '' : ' (default)');
    issues.push({
      path: ['context_thresholds', blamed],
      movement: null,
      message: `context_thresholds must increase (warn < prompt < force_transition < exhausted), but ${upper} ${hi}${note(upper)} is not above ${lower} ${lo}${note(lower)}`,
    });
  }
  return issues;
}

function reachableFrom(start: string, byName: Map<string, RawMovement>): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length > 0) {
    const m = byName.get(queue.shift() as string);
    if (!m) continue;
    for (const target of [...m.rules.map((r) => r.next), m.defaultNext]) {
      if (target === null || seen.has(target) || !byName.has(target)) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return seen;
}
