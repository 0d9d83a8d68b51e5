// Reads piece YAML: syntax (yaml), shape (zod) and graph (lint), every problem mapped back to its
// line so a piece author can fix all of them in one pass. Uses node:fs: never import this module
// from workflow code (use piece-targets.ts there).
import { constants as fsConstants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { Piece } from '../../core/types.js';
import { isInsideOrEqual, pathSyntaxProblem, realpathOfDeepest } from '../../config/path-roots.js';
import { lintPiece, type PiecePath } from './piece-lint.js';
import { fieldOf, lineOf, movementAt, schemaMessage, startLine, syntaxErrorLine, unknownKeyMessage } from './piece-issues.js';
import { PieceSchema } from './piece.schema.js';
import { checkYamlLimits, DEFAULT_YAML_LIMITS, MAX_ALIAS_EXPANSION, type YamlLimitViolation } from './yaml-limits.js';

/** At most this many issues are reported (the rest are counted), each message cut to this length. */
export const MAX_PIECE_ISSUES = 50;
export const MAX_ISSUE_MESSAGE_CHARS = 500;

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

/** The YAML breaks a size, depth, alias or node limit: refused before it was parsed. */
export class YamlLimitError extends PieceError {
  override name = 'YamlLimitError';
  constructor(
    readonly violation: YamlLimitViolation,
    issues: PieceIssue[],
    options?: { cause?: unknown },
  ) {
    super(issues, options);
  }
}

/** A piece path that is not inside one of the pieces directories (MAESTRO_PIECES_DIRS). */
export class PiecePathError extends Error {
  override name = 'PiecePathError';
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
export function checkPiece(
  text: string,
  file: string,
): { piece: Piece | null; issues: PieceIssue[]; limit?: YamlLimitViolation } {
  const limit = checkYamlLimits(text);
  if (limit) return { piece: null, issues: [limitIssue(file, limit)], limit };
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    keepSourceTokens: true,
    lineCounter,
    // Not prettyErrors: it re-scans the source line for each error, quadratic on one long line.
    prettyErrors: false,
    uniqueKeys: true,
    // Warnings (e.g. collection keys) go to the process log: a caller must not be able to fill it.
    logLevel: 'error',
  });
  if (doc.errors.length > 0) {
    // After a syntax error the tree is a guess; shape errors found in it would only mislead.
    // Only the errors that will be reported are located (locating one walks the document).
    const located = doc.errors.slice(0, MAX_PIECE_ISSUES).map((e) => ({
      file,
      line: syntaxErrorLine(doc, lineCounter, text, e.pos[0]) ?? lineCounter.linePos(e.pos[0]).line,
      movement: null,
      field: null,
      message: `YAML syntax error: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
    }));
    return { piece: null, issues: capIssues(located, file, doc.errors.length - located.length) };
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_EXPANSION });
  } catch (err) {
    // yaml's own guard against alias expansion ("Excessive alias count ..."), after our static count.
    if (!(err instanceof ReferenceError)) throw err;
    const expansion: YamlLimitViolation = {
      limit: 'maxAliases',
      line: firstAliasLine(doc, lineCounter) ?? 1,
      message: `the YAML's aliases expand beyond ${MAX_ALIAS_EXPANSION} nodes (the alias-expansion limit)`,
    };
    return { piece: null, issues: [limitIssue(file, expansion)], limit: expansion };
  }
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
  // PostgreSQL stores no NUL in text or jsonb: refused here with its line, not as a failed insert.
  const nul = pathOfNul(raw);
  if (nul) return { piece: null, issues: [issue(nul, 'contains a NUL character (\\0), which a piece may not hold')] };

  // Locating an issue walks the document, so only the issues that will be reported are located.
  const issues: PieceIssue[] = [];
  let dropped = 0;
  const add = (make: () => PieceIssue) => {
    if (issues.length < MAX_PIECE_ISSUES) issues.push(make());
    else dropped++;
  };
  const parsed = PieceSchema.safeParse(raw);
  if (!parsed.success) {
    for (const zi of parsed.error.issues) {
      const p = zi.path as PiecePath;
      if (zi.code === 'unrecognized_keys') {
        for (const key of zi.keys) add(() => issue([...p, key], unknownKeyMessage(key, p)));
      } else {
        add(() => issue(p, schemaMessage(zi, raw)));
      }
    }
  }
  for (const li of lintPiece(raw)) add(() => issue(li.path, li.message, li.movement));
  issues.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  const capped = capIssues(issues, file, dropped);
  return { piece: capped.length === 0 && parsed.success ? parsed.data : null, issues: capped };
}

function limitIssue(file: string, v: YamlLimitViolation): PieceIssue {
  return { file, line: v.line, movement: null, field: null, message: `refused before parsing: ${v.message}` };
}

/** At most MAX_PIECE_ISSUES issues with short messages, and one more saying how many were left out. */
/** Where in parsed YAML a key or string holds a NUL character, or null. */
function pathOfNul(v: unknown, at: PiecePath = []): PiecePath | null {
  if (typeof v === 'string') return v.includes('\0') ? at : null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = pathOfNul(v[i], [...at, i]);
      if (found) return found;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k.includes('\0')) return [...at, k];
      const found = pathOfNul(x, [...at, k]);
      if (found) return found;
    }
  }
  return null;
}

export function capIssues(issues: PieceIssue[], file: string, alreadyDropped = 0): PieceIssue[] {
  const kept = issues.slice(0, MAX_PIECE_ISSUES).map((i) => ({
    ...i,
    movement: i.movement === null ? null : truncate(i.movement, 200),
    field: i.field === null ? null : truncate(i.field, 200),
    message: truncate(i.message, MAX_ISSUE_MESSAGE_CHARS),
  }));
  const dropped = alreadyDropped + Math.max(0, issues.length - MAX_PIECE_ISSUES);
  if (dropped > 0) kept.push({ file, line: null, movement: null, field: null, message: `... and ${dropped} more issue(s) not shown` });
  return kept;
}

function truncate(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

function firstAliasLine(doc: Document, lc: LineCounter): number | null {
  let line: number | null = null;
  visit(doc, {
    Alias(_key, node) {
      line = startLine(node, lc);
      return visit.BREAK;
    },
  });
  return line;
}

/** yaml parse + zod + lint; throws PieceError listing every issue. */
export function parsePiece(text: string, file: string): Piece {
  const { piece, issues, limit } = checkPiece(text, file);
  if (limit) throw new YamlLimitError(limit, issues);
  if (!piece) throw new PieceError(issues);
  return piece;
}

export async function loadPieceFile(file: string): Promise<Piece> {
  return parsePiece(await readPieceText(file), file);
}

/** A regular file's text, refused past the size limit before it is read (no FIFO, device or huge file). */
async function readPieceText(file: string): Promise<string> {
  const notFound = async (cause: unknown) => new PieceNotFoundError(file, await builtinNames(), { cause });
  try {
    const st = await stat(file);
    if (!st.isFile()) throw await notFound(new Error(`${file} is not a regular file`));
    if (st.size > DEFAULT_YAML_LIMITS.maxBytes) {
      const v: YamlLimitViolation = {
        limit: 'maxBytes',
        line: 1,
        message: `the file is ${st.size} bytes, over the limit of ${DEFAULT_YAML_LIMITS.maxBytes} bytes`,
      };
      throw new YamlLimitError(v, [limitIssue(file, v)]);
    }
    // Non-blocking: should the file be swapped for a FIFO after the stat, open must not hang.
    const fh = await open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    try {
      const buf = Buffer.alloc(DEFAULT_YAML_LIMITS.maxBytes + 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      return buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } catch (err) {
    if (err instanceof PieceNotFoundError || err instanceof YamlLimitError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR' || code === 'EAGAIN') throw await notFound(err);
    throw err;
  }
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

export interface ResolvePieceOptions {
  /** Folders a piece path must lie in, after symlinks; default: the built-in pieces/ only. */
  piecesDirs?: readonly string[];
}

/**
 * Where the .yaml/.yml file `nameOrFile` really is, when that is inside one of `dirs`; PiecePathError
 * otherwise, whether or not the file exists (the answer must not tell what exists elsewhere).
 */
export async function piecePathInDirs(nameOrFile: string, dirs: readonly string[]): Promise<string> {
  const problem = pathSyntaxProblem(nameOrFile);
  if (problem) throw new PiecePathError(`piece path ${problem}`);
  if (!/\.ya?ml$/i.test(nameOrFile)) throw new PiecePathError('a piece path must name a .yaml or .yml file');
  const real = await realpathOfDeepest(path.resolve(nameOrFile)).catch((err: unknown) => {
    throw new PiecePathError('piece path cannot be resolved (a dangling symlink?)', { cause: err });
  });
  const realDirs = await Promise.all(dirs.map((d) => realpathOfDeepest(path.resolve(d))));
  if (!realDirs.some((d) => isInsideOrEqual(d, real))) {
    throw new PiecePathError(`piece path is not inside a pieces directory (MAESTRO_PIECES_DIRS: ${dirs.join(path.delimiter)})`);
  }
  return real;
}

/**
 * A built-in name (pieces/<name>.yaml) or a path, absolute or relative to the cwd, to a YAML file
 * inside one of `opts.piecesDirs`.
 */
export async function resolvePiece(nameOrFile: string, opts: ResolvePieceOptions = {}): Promise<{ piece: Piece; file: string }> {
  const looksLikeName = /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(nameOrFile);
  if (looksLikeName) {
    const names = await builtinNames();
    if (names.includes(nameOrFile)) {
      const file = path.join(builtinPiecesDir(), `${nameOrFile}.yaml`);
      return { piece: await loadPieceFile(file), file };
    }
    throw new PieceNotFoundError(nameOrFile, names);
  }
  const file = await piecePathInDirs(nameOrFile, opts.piecesDirs ?? [builtinPiecesDir()]);
  try {
    return { piece: await loadPieceFile(file), file };
  } catch (err) {
    // Report the name as the user typed it, not our absolute path.
    if (err instanceof PieceNotFoundError) throw new PieceNotFoundError(nameOrFile, err.builtins, { cause: err });
    throw err;
  }
}
