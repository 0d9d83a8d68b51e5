// The loader: YAML syntax and schema errors with lines, all issues at once, defaults, built-ins,
// resolvePiece and the piece-wide transition targets.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  builtinPiecesDir,
  collectPieceTransitionTargets,
  formatPieceIssues,
  listBuiltinPieces,
  loadPieceFile,
  movementTargets,
  parsePiece,
  PieceError,
  PieceNotFoundError,
  resolvePiece,
} from '../../engine/piece/index.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/pieces/${name}`, import.meta.url));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

async function pieceError(file: string): Promise<PieceError> {
  const err = await loadPieceFile(file).then(
    () => assert.fail(`${file} should not load`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof PieceError, String(err));
  return err;
}

test('a YAML syntax error gives the line where the broken construct starts', async () => {
  const err = await pieceError(fixture('syntax-error.yaml'));
  assert.equal(err.issues.length, 1);
  assert.equal(err.issues[0].line, 6);
  assert.match(err.issues[0].message, /YAML syntax error: .*quote/);
});

test('a YAML error inside the file keeps the parser line (duplicate key)', () => {
  assert.throws(
    () => parsePiece('name: a\nname: b\ninitial_movement: x\n', 'dup.yaml'),
    (e: unknown) => e instanceof PieceError && e.issues[0].line === 2 && /unique/.test(e.issues[0].message),
  );
});

test('an unknown key is named, with its line and a suggestion', async () => {
  const err = await pieceError(fixture('unknown-key.yaml'));
  assert.equal(err.issues.length, 1);
  const [issue] = err.issues;
  assert.equal(issue.line, 7);
  assert.equal(issue.movement, 'work');
  assert.equal(issue.field, 'alowed_tools');
  assert.match(issue.message, /unknown key "alowed_tools".*did you mean "allowed_tools"/);
});

test('schema and lint issues are reported together, sorted by line, one per line in the message', async () => {
  const file = fixture('many-errors.yaml');
  const err = await pieceError(file);
  const seen = err.issues.map((i) => `${i.line} ${i.movement ?? '-'} ${i.field ?? '-'}`);
  assert.deepEqual(seen, [
    '3 - max_movments',
    '6 - context_thresholds.warn',
    '10 plan allowed_tools[1]',
    '13 plan rules[0].next',
    '14 plan default_next',
    '15 Bad Name name',
    '15 Bad Name name',
    '17 lonely instruction',
    '17 lonely name',
    '18 lonely max_iterations',
  ]);
  const lines = err.message.split('\n');
  assert.equal(lines.length, err.issues.length);
  assert.equal(lines[0], `${file}:3: unknown key "max_movments" in piece (did you mean "max_movements"?); allowed keys: ${lines[0].split('allowed keys: ')[1]}`);
  assert.ok(lines[2].startsWith(`${file}:10: movement "plan": unknown tool "Teleport"`), lines[2]);
  assert.equal(lines[7], `${file}:17: movement "lonely": instruction is required`);
});

test('formatPieceIssues leaves out the parts that are null', () => {
  assert.equal(
    formatPieceIssues([
      { file: 'a.yaml', line: null, movement: null, field: null, message: 'm1' },
      { file: 'a.yaml', line: 4, movement: 'plan', field: 'rules', message: 'm2' },
    ]),
    'a.yaml: m1\na.yaml:4: movement "plan": m2',
  );
});

test('defaults are filled in and control tools in allowed_tools are accepted but dropped', () => {
  const piece = parsePiece(
    [
      'name: d',
      'initial_movement: a',
      'system_prompt: s',
      'context_thresholds: { warn: 0.5 }',
      'movements:',
      '  - name: a',
      '    instruction: i',
      '    allowed_tools: [Read, complete, transition]',
    ].join('\n'),
    'd.yaml',
  );
  assert.equal(piece.max_movements, 20);
  assert.equal(piece.max_iterations, 30);
  assert.equal(piece.text_only_limit, 3);
  assert.equal(piece.max_asks, 3);
  assert.deepEqual(piece.context_thresholds, { warn: 0.5, prompt: 0.85, force_transition: 0.95, exhausted: 0.99 });
  assert.deepEqual(piece.movements[0].allowed_tools, ['Read']);
  assert.deepEqual(piece.movements[0].rules, []);
});

test('both built-ins load clean and are listed', async () => {
  const list = await listBuiltinPieces();
  assert.deepEqual(
    list.map((p) => p.name),
    ['chat', 'develop'],
  );
  for (const entry of list) {
    assert.ok(entry.description.length > 0);
    assert.equal(path.dirname(entry.file), builtinPiecesDir());
  }
  assert.equal(builtinPiecesDir(), path.join(repoRoot, 'pieces'));

  const chat = (await resolvePiece('chat')).piece;
  assert.equal(chat.movements.length, 1);
  assert.deepEqual(chat.movements[0].rules, []);
  assert.equal(chat.movements[0].default_next, 'COMPLETE');
  assert.deepEqual(chat.movements[0].allowed_tools, ['Read', 'Write', 'Edit', 'Bash', 'Grep', 'Glob']);
  assert.deepEqual(collectPieceTransitionTargets(chat), []);
});

test('develop: plan -> implement -> review, review verifies and may go back', async () => {
  const { piece, file } = await resolvePiece('develop');
  assert.equal(file, path.join(builtinPiecesDir(), 'develop.yaml'));
  assert.equal(piece.max_movements, 12);
  assert.equal(piece.initial_movement, 'plan');
  const [plan, implement, review] = piece.movements;
  assert.deepEqual([plan.name, implement.name, review.name], ['plan', 'implement', 'review']);
  assert.deepEqual(plan.allowed_tools, ['Read', 'Grep', 'Glob']);
  assert.deepEqual(implement.allowed_tools, ['Read', 'Write', 'Edit', 'Bash', 'Grep', 'Glob']);
  assert.deepEqual(review.allowed_tools, ['Read', 'Grep', 'Glob', 'Bash']);
  assert.equal(review.verify, true);
  assert.deepEqual(movementTargets(plan), ['implement']);
  assert.deepEqual(movementTargets(review), ['implement']);
  assert.deepEqual(collectPieceTransitionTargets(piece), ['implement', 'review']);
  // The system prompt is shared by every job and movement: nothing that varies may be in it.
  assert.doesNotMatch(piece.system_prompt, /\{\{|\$\{/);
});

test('collectPieceTransitionTargets keeps WAIT_SUBTASKS and drops COMPLETE/ABORT', () => {
  const piece = parsePiece(
    [
      'name: t',
      'initial_movement: b',
      'system_prompt: s',
      'movements:',
      '  - name: b',
      '    instruction: i',
      '    rules: [{ condition: c, next: WAIT_SUBTASKS }, { condition: d, next: a }]',
      '    default_next: a',
      '  - name: a',
      '    instruction: i',
      '    default_next: ABORT',
    ].join('\n'),
    't.yaml',
  );
  assert.deepEqual(collectPieceTransitionTargets(piece), ['WAIT_SUBTASKS', 'a']);
  assert.deepEqual(movementTargets(piece.movements[0]), ['WAIT_SUBTASKS', 'a']);
  assert.deepEqual(movementTargets(piece.movements[1]), []);
});

test('resolvePiece by absolute and relative path', async () => {
  const abs = await resolvePiece(fixture('valid-minimal.yaml'));
  assert.equal(abs.piece.name, 'minimal');
  assert.equal(abs.file, fixture('valid-minimal.yaml'));
  const rel = path.relative(process.cwd(), fixture('valid-minimal.yaml'));
  const viaRel = await resolvePiece(rel);
  assert.equal(viaRel.file, fixture('valid-minimal.yaml'));
  assert.deepEqual(viaRel.piece, abs.piece);
});

test('resolvePiece of an unknown name lists the built-ins', async () => {
  await assert.rejects(resolvePiece('no-such-piece'), (e: unknown) => {
    assert.ok(e instanceof PieceNotFoundError);
    assert.deepEqual(e.builtins, ['chat', 'develop']);
    assert.match(e.message, /"no-such-piece".*chat, develop/);
    return true;
  });
});

test('resolvePiece of a missing file is PieceNotFoundError; a bad file is PieceError', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'maestro-piece-'));
  try {
    await assert.rejects(resolvePiece(path.join(dir, 'missing.yaml')), PieceNotFoundError);
    const bad = path.join(dir, 'bad.yaml');
    await writeFile(bad, 'name: bad\ninitial_movement: x\nsystem_prompt: s\nmovements:\n  - name: y\n    instruction: i\n');
    await assert.rejects(resolvePiece(bad), (e: unknown) => {
      assert.ok(e instanceof PieceError);
      assert.match(e.message, new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: initial_movement "x"`));
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
