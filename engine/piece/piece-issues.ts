// Maps zod and lint findings on a piece document back to lines and readable messages.
import { isMap, isNode, isPair, isScalar, isSeq, visit, type Document, type LineCounter } from 'yaml';
import type { z } from 'zod';
import type { PiecePath } from './piece-lint.js';
import { PieceSchema } from './piece.schema.js';

export function lineOf(doc: Document, lc: LineCounter, p: PiecePath): number | null {
  let node: unknown = doc.contents;
  let line = startLine(node, lc);
  for (const key of p) {
    let next: unknown;
    let keyNode: unknown;
    if (isMap(node)) {
      const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && it.key.value === key);
      keyNode = pair?.key;
      next = pair?.value;
      if (pair && next === null) next = keyNode; // `key:` with no value: point at the key
    } else if (isSeq(node) && typeof key === 'number') {
      next = node.items[key];
    }
    if (next === undefined) break;
    // An unknown or misplaced key is best shown where the key is written.
    line = startLine(keyNode, lc) ?? startLine(next, lc) ?? line;
    node = next;
  }
  return line ?? 1;
}

/**
 * An unclosed quote or bracket is only detected at the end of the file; point at where the
 * unclosed construct starts instead (the innermost node running to the end), not past the last line.
 */
export function syntaxErrorLine(doc: Document, lc: LineCounter, text: string, offset: number): number | null {
  const end = text.trimEnd().length;
  if (offset < end) return null;
  let start = -1;
  visit(doc, (_key, node) => {
    if (isNode(node) && node.range && node.range[1] >= end && node.range[0] > start) start = node.range[0];
  });
  return start >= 0 ? lc.linePos(start).line : lc.linePos(Math.max(0, end - 1)).line;
}

export function startLine(node: unknown, lc: LineCounter): number | null {
  const range = (node as { range?: [number, number, number] | null } | null | undefined)?.range;
  return range ? lc.linePos(range[0]).line : null;
}

function valueAt(raw: unknown, p: PiecePath): unknown {
  let v = raw;
  for (const key of p) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

export function movementAt(raw: unknown, p: PiecePath): string | null {
  if (p[0] !== 'movements' || typeof p[1] !== 'number') return null;
  const name = valueAt(raw, ['movements', p[1], 'name']);
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : `#${p[1] + 1}`;
}

/** The field relative to its movement (`rules[0].next`) or to the piece (`context_thresholds.warn`). */
export function fieldOf(p: PiecePath): string | null {
  const rest = p[0] === 'movements' && typeof p[1] === 'number' ? p.slice(2) : p;
  if (rest.length === 0) return null;
  return rest.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : acc ? `${acc}.${k}` : k), '');
}

function describeField(p: PiecePath): string {
  return fieldOf(p) ?? (p.length === 2 && p[0] === 'movements' ? 'movement' : 'piece');
}

const KIND_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
};

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return typeof v === 'string' ? `the string "${v}"` : `the ${typeof v} ${String(v)}`;
}

export function schemaMessage(zi: z.core.$ZodIssue, raw: unknown): string {
  const p = zi.path as PiecePath;
  const field = describeField(p);
  if (zi.code === 'invalid_type') {
    const value = valueAt(raw, p);
    if (value === undefined) return `${field} is required`;
    return `${field} must be ${KIND_NAMES[zi.expected] ?? zi.expected}, not ${kindOf(value)}`;
  }
  // Our own refinements already name the field.
  if (zi.code === 'custom') return zi.message;
  return `${field}: ${zi.message}`;
}

export function unknownKeyMessage(key: string, objectPath: PiecePath): string {
  const where = objectPath.length === 0 ? 'piece' : describeField(objectPath);
  const allowed = allowedKeys(objectPath);
  const guess = allowed.map((k) => ({ k, d: editDistance(k, key) })).sort((a, b) => a.d - b.d)[0];
  const hint = guess && guess.d <= Math.max(2, Math.floor(key.length / 3)) ? ` (did you mean "${guess.k}"?)` : '';
  return `unknown key "${key}" in ${where}${hint}; allowed keys: ${allowed.join(', ')}`;
}

function allowedKeys(objectPath: PiecePath): string[] {
  const shape = PieceSchema.shape;
  if (objectPath.length === 0) return Object.keys(shape);
  if (objectPath[0] === 'context_thresholds') return ['warn', 'prompt', 'force_transition', 'exhausted'];
  if (objectPath[0] === 'movements' && objectPath.length === 2) return Object.keys(shape.movements.element.shape);
  if (objectPath[0] === 'movements' && objectPath[2] === 'rules') return ['condition', 'next'];
  return [];
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}
