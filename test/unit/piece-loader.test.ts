// The loader: YAML syntax and schema errors with lines, all issues at once, defaults, built-ins,
// resolvePiece and the piece-wide transition targets.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
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
import { PiecePathError, YamlLimitError } from '../../engine/piece/piece-loader.js';

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

const fixturesDir = path.dirname(fixture('valid-minimal.yaml'));

test('resolvePiece by absolute and relative path inside a pieces dir', async () => {
  const abs = await resolvePiece(fixture('valid-minimal.yaml'), { piecesDirs: [fixturesDir] });
  assert.equal(abs.piece.name, 'minimal');
  assert.equal(abs.file, fixture('valid-minimal.yaml'));
  const rel = path.relative(process.cwd(), fixture('valid-minimal.yaml'));
  const viaRel = await resolvePiece(rel, { piecesDirs: [fixturesDir] });
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
    await assert.rejects(resolvePiece(path.join(dir, 'missing.yaml'), { piecesDirs: [dir] }), PieceNotFoundError);
    const bad = path.join(dir, 'bad.yaml');
    await writeFile(bad, 'name: bad\ninitial_movement: x\nsystem_prompt: s\nmovements:\n  - name: y\n    instruction: i\n');
    await assert.rejects(resolvePiece(bad, { piecesDirs: [dir] }), (e: unknown) => {
      assert.ok(e instanceof PieceError);
      assert.match(e.message, new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: initial_movement "x"`));
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a piece path outside the pieces dirs is refused whether or not it exists, symlinks included', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'maestro-pieces-'));
  const outside = await mkdtemp(path.join(tmpdir(), 'maestro-outside-'));
  try {
    await writeFile(path.join(outside, 'evil.yaml'), await import('node:fs/promises').then((f) => f.readFile(fixture('valid-minimal.yaml'), 'utf8')));
    await symlink(outside, path.join(dir, 'link'));
    await symlink(path.join(outside, 'evil.yaml'), path.join(dir, 'file-link.yaml'));
    for (const p of [
      '/etc/passwd.yaml',
      path.join(outside, 'evil.yaml'),
      path.join(outside, 'missing.yaml'),
      path.join(dir, 'link', 'evil.yaml'),
      path.join(dir, 'file-link.yaml'),
      `${dir}/../${path.basename(outside)}/evil.yaml`,
      path.join(dir, 'x\0.yaml'),
      path.join(dir, 'not-yaml.txt'),
    ]) {
      await assert.rejects(resolvePiece(p, { piecesDirs: [dir] }), PiecePathError, p);
    }
    // Without dirs given, only the built-in pieces/ folder is allowed.
    await assert.rejects(resolvePiece(fixture('valid-minimal.yaml')), PiecePathError);
    assert.equal((await resolvePiece(path.join(builtinPiecesDir(), 'chat.yaml'))).piece.name, 'chat');
    assert.equal((await resolvePiece('chat', { piecesDirs: [dir] })).piece.name, 'chat', 'built-in names work regardless');
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'sub', 'ok.yaml'), await import('node:fs/promises').then((f) => f.readFile(fixture('valid-minimal.yaml'), 'utf8')));
    assert.equal((await resolvePiece(path.join(dir, 'sub', 'ok.yaml'), { piecesDirs: [dir] })).piece.name, 'minimal');
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  }
});

test('a piece file over the size limit is refused before it is read', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'maestro-pieces-'));
  try {
    const big = path.join(dir, 'big.yaml');
    await writeFile(big, `name: big\n# ${'x'.repeat(600 * 1024)}\n`);
    await assert.rejects(resolvePiece(big, { piecesDirs: [dir] }), (e: unknown) => {
      assert.ok(e instanceof YamlLimitError);
      assert.equal(e.violation.limit, 'maxBytes');
      assert.match(e.message, /big\.yaml:1: refused before parsing: the file is \d+ bytes, over the limit of 524288 bytes/);
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a piece with thousands of problems reports the first 50 and counts the rest, messages cut short', () => {
  const keys = Array.from({ length: 400 }, (_, i) => `bogus_key_${i}${'y'.repeat(i === 0 ? 1000 : 0)}: 1`).join('\n');
  const err = (() => {
    try {
      parsePiece(`${keys}\n`, 'many.yaml');
    } catch (e) {
      return e;
    }
    return assert.fail('should not parse');
  })();
  assert.ok(err instanceof PieceError);
  assert.equal(err.issues.length, 51);
  assert.match(err.issues.at(-1)!.message, /^\.\.\. and \d+ more issue\(s\) not shown$/);
  assert.ok(err.issues.every((i) => i.message.length <= 500));
});
