// Reads piece YAML: syntax (yaml), shape (zod) and graph (lint), every problem mapped back to its
// line so a piece author can fix all of them in one pass. Uses node:fs: never import this module
// from workflow code (use piece-targets.ts there).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { z } from 'zod';
import type { Piece } from '../../core/types.js';
import { lintPiece, type PiecePath } from './piece-lint.js';
import { PieceSchema } from './piece.schema.js';

export interface PieceIssue {
  file: string;
  line: number | null;
  movement: string | null;
  field: string | null;
  message: string;
}

export class PieceError extends Error {
  override name = 'PieceError';
  readonly issues: PieceIssue[];
  constructor(issues: PieceIssue[], options?: { cause?: unknown }) {
    super(formatPieceIssues(issues), options);
    this.issues = issues;
  }
}

export class PieceNotFoundError extends Error {
  override name = 'PieceNotFoundError';
  constructor(
    readonly nameOrFile: string,
    readonly builtins: string[],
    options?: { cause?: unknown },
  ) {
    super(
      `unknown piece "${nameOrFile}": not a built-in piece (${builtins.join(', ') || 'none'}) and not a readable .yaml file`,
      options,
    );
  }
}

/** One issue per line: `file:line: movement "plan": message`, leaving out the parts that are null. */
export function formatPieceIssues(issues: PieceIssue[]): string {
  return issues
    .map((i) => {
      const where = i.line === null ? i.file : `${i.file}:${i.line}`;
      const movement = i.movement === null ? '' : ` movement "${i.movement}":`;
      return `${where}:${movement} ${i.message}`;
    })
    .join('\n');
}

/** Parse, validate and lint without throwing: the piece when clean, and every issue found. */
export function checkPiece(text: string, file: string): { piece: Piece | null; issues: PieceIssue[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { keepSourceTokens: true, lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // After a syntax error the tree is a guess; shape errors found in it would only mislead.
    const issues = doc.errors.map((e) => ({
      file,
      line: syntaxErrorLine(doc, lineCounter, text, e.pos[0]) ?? e.linePos?.[0].line ?? null,
      movement: null,
      field: null,
      message: `YAML syntax error: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
    }));
    return { piece: null, issues };
  }
  const raw: unknown = doc.toJS();
  if (raw === null || raw === undefined) {
    return { piece: null, issues: [{ file, line: 1, movement: null, field: null, message: 'the piece file is empty' }] };
  }
  const locate = (p: PiecePath) => lineOf(doc, lineCounter, p);
  const issue = (p: PiecePath, message: string, movement = movementAt(raw, p)): PieceIssue => ({
    file,
    line: locate(p),
    movement,
    field: fieldOf(p),
    message,
  });

  const issues: PieceIssue[] = [];
  const parsed = PieceSchema.safeParse(raw);
  if (!parsed.success) {
    for (const zi of parsed.error.issues) {
      const p = zi.path as PiecePath;
      if (zi.code === 'unrecognized_keys') {
        for (const key of zi.keys) issues.push(issue([...p, key], unknownKeyMessage(key, p)));
      } else {
        issues.push(issue(p, schemaMessage(zi, raw)));
      }
    }
  }
  for (const li of lintPiece(raw)) issues.push(issue(li.path, li.message, li.movement));
  issues.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  return { piece: issues.length === 0 && parsed.success ? parsed.data : null, issues };
}

/** yaml parse + zod + lint; throws PieceError listing every issue. */
export function parsePiece(text: string, file: string): Piece {
  const { piece, issues } = checkPiece(text, file);
  if (!piece) throw new PieceError(issues);
  return piece;
}

export async function loadPieceFile(file: string): Promise<Piece> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') {
      throw new PieceNotFoundError(file, await builtinNames(), { cause: err });
    }
    throw err;
  }
  return parsePiece(text, file);
}

export function builtinPiecesDir(): string {
  return fileURLToPath(new URL('../../pieces', import.meta.url));
}

async function builtinNames(): Promise<string[]> {
  const entries = await readdir(builtinPiecesDir()).catch(() => [] as string[]);
  return entries
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

export async function listBuiltinPieces(): Promise<Array<{ name: string; description: string; file: string }>> {
  const out: Array<{ name: string; description: string; file: string }> = [];
  for (const name of await builtinNames()) {
    const file = path.join(builtinPiecesDir(), `${name}.yaml`);
    const piece = await loadPieceFile(file);
    out.push({ name: piece.name, description: piece.description ?? '', file });
  }
  return out;
}

/** A built-in name (pieces/<name>.yaml) or a path, absolute or relative to the cwd, to a YAML file. */
export async function resolvePiece(nameOrFile: string): Promise<{ piece: Piece; file: string }> {
  const looksLikeName = /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(nameOrFile);
  if (looksLikeName) {
    const names = await builtinNames();
    if (names.includes(nameOrFile)) {
      const file = path.join(builtinPiecesDir(), `${nameOrFile}.yaml`);
      return { piece: await loadPieceFile(file), file };
    }
    throw new PieceNotFoundError(nameOrFile, names);
  }
  const file = path.resolve(nameOrFile);
  try {
    return { piece: await loadPieceFile(file), file };
  } catch (err) {
    // Report the name as the user typed it, not our absolute path.
    if (err instanceof PieceNotFoundError) throw new PieceNotFoundError(nameOrFile, err.builtins, { cause: err });
    throw err;
  }
}

// ---- mapping document paths to lines and messages ----

function lineOf(doc: Document, lc: LineCounter, p: PiecePath): number | null {
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
function syntaxErrorLine(doc: Document, lc: LineCounter, text: string, offset: number): number | null {
  const end = text.trimEnd().length;
  if (offset < end) return null;
  let start = -1;
  visit(doc, (_key, node) => {
    if (isNode(node) && node.range && node.range[1] >= end && node.range[0] > start) start = node.range[0];
  });
  return start >= 0 ? lc.linePos(start).line : lc.linePos(Math.max(0, end - 1)).line;
}

function startLine(node: unknown, lc: LineCounter): number | null {
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

function movementAt(raw: unknown, p: PiecePath): string | null {
  if (p[0] !== 'movements' || typeof p[1] !== 'number') return null;
  const name = valueAt(raw, ['movements', p[1], 'name']);
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : `#${p[1] + 1}`;
}

/** The field relative to its movement (`rules[0].next`) or to the piece (`context_thresholds.warn`). */
function fieldOf(p: PiecePath): string | null {
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

function schemaMessage(zi: z.core.$ZodIssue, raw: unknown): string {
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

function unknownKeyMessage(key: string, objectPath: PiecePath): string {
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
