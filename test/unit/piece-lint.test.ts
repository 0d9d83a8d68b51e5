// Each lint error kind, asserted with the line the author has to fix (fixtures under test/fixtures/pieces).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkPiece, lintPiece, type PieceIssue } from '../../engine/piece/index.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/pieces/${name}`, import.meta.url));

async function issuesOf(name: string): Promise<PieceIssue[]> {
  const file = fixture(name);
  const { piece, issues } = checkPiece(await readFile(file, 'utf8'), file);
  assert.equal(piece, null, `${name} should not load`);
  for (const issue of issues) assert.equal(issue.file, file);
  return issues;
}

const brief = (issues: PieceIssue[]) => issues.map((i) => ({ line: i.line, movement: i.movement, field: i.field }));

test('unknown rules[].next and default_next targets are reported on their lines', async () => {
  const issues = await issuesOf('unknown-next.yaml');
  const next = issues.find((i) => i.field === 'rules[0].next');
  assert.ok(next, JSON.stringify(issues));
  assert.equal(next.line, 9);
  assert.equal(next.movement, 'plan');
  assert.match(next.message, /"implemnt" is not a movement/);
  assert.match(next.message, /movements: plan, implement/);
  const dn = issues.find((i) => i.field === 'default_next');
  assert.ok(dn);
  assert.equal(dn.line, 10);
  assert.match(dn.message, /"build".*movement name, COMPLETE or ABORT/);
});

test('an initial_movement that does not exist is reported on its line', async () => {
  const issues = await issuesOf('bad-initial.yaml');
  assert.deepEqual(brief(issues), [{ line: 2, movement: null, field: 'initial_movement' }]);
  assert.match(issues[0].message, /initial_movement "start" is not a movement/);
});

test('a movement no path reaches is reported at its name', async () => {
  const issues = await issuesOf('unreachable.yaml');
  assert.deepEqual(brief(issues), [{ line: 8, movement: 'orphan', field: 'name' }]);
  assert.match(issues[0].message, /unreachable.*initial_movement "plan"/);
});

test('a movement only reachable from an unreachable one is unreachable too', () => {
  const issues = lintPiece({
    initial_movement: 'a',
    movements: [
      { name: 'a', default_next: 'COMPLETE' },
      { name: 'b', default_next: 'c' },
      { name: 'c', rules: [{ condition: 'x', next: 'b' }] },
    ],
  });
  assert.deepEqual(
    issues.map((i) => i.movement),
    ['b', 'c'],
  );
});

test('duplicate movement names are reported at the second one', async () => {
  const issues = await issuesOf('duplicate-movement.yaml');
  assert.deepEqual(brief(issues), [{ line: 8, movement: 'work', field: 'name' }]);
  assert.match(issues[0].message, /duplicate movement name "work"/);
});

test('sentinels in rules[].next are rejected with where they come from', async () => {
  const issues = await issuesOf('sentinel-rule.yaml');
  assert.deepEqual(brief(issues), [
    { line: 9, movement: 'work', field: 'rules[0].next' },
    { line: 11, movement: 'work', field: 'rules[1].next' },
  ]);
  assert.match(issues[0].message, /COMPLETE is reached with the complete tool, not a rule/);
  assert.match(issues[1].message, /ASK is reached with complete\(/);
});

test('every engine sentinel but WAIT_SUBTASKS is refused as a rule target', () => {
  for (const sentinel of ['ABORT', 'WAITING_HUMAN_BROWSER', 'WAITING_HUMAN_TOOL_REQUEST', 'WAITING_HUMAN_SPAWN_REQUEST']) {
    const issues = lintPiece({
      initial_movement: 'a',
      movements: [{ name: 'a', rules: [{ condition: 'c', next: sentinel }], default_next: 'COMPLETE' }],
    });
    assert.equal(issues.length, 1, sentinel);
    assert.deepEqual(issues[0].path, ['movements', 0, 'rules', 0, 'next']);
    assert.match(issues[0].message, new RegExp(`${sentinel} is .*not a rule`));
  }
  const ok = lintPiece({
    initial_movement: 'a',
    movements: [{ name: 'a', rules: [{ condition: 'c', next: 'WAIT_SUBTASKS' }], default_next: 'COMPLETE' }],
  });
  assert.deepEqual(ok, []);
});

test('a WAIT_SUBTASKS rule without default_next is reported (nowhere to resume)', async () => {
  const issues = await issuesOf('wait-subtasks-no-default.yaml');
  assert.deepEqual(brief(issues), [{ line: 10, movement: 'fan-out', field: 'rules[0].next' }]);
  assert.match(issues[0].message, /WAIT_SUBTASKS.*no default_next/);
});

test('default_next accepts movement names, COMPLETE and ABORT but no other sentinel', () => {
  const piece = (dn: string) => ({ initial_movement: 'a', movements: [{ name: 'a', default_next: dn }] });
  assert.deepEqual(lintPiece(piece('COMPLETE')), []);
  assert.deepEqual(lintPiece(piece('ABORT')), []);
  assert.deepEqual(lintPiece(piece('a')), []);
  for (const bad of ['ASK', 'WAIT_SUBTASKS', 'elsewhere']) {
    const issues = lintPiece(piece(bad));
    assert.equal(issues.length, 1, bad);
    assert.deepEqual(issues[0].path, ['movements', 0, 'default_next']);
  }
});

test('context thresholds must increase; the issue points at a key the author wrote', () => {
  const issues = checkPiece(
    [
      'name: t',
      'initial_movement: a',
      'system_prompt: s',
      'context_thresholds:',
      '  force_transition: 0.8',
      'movements:',
      '  - name: a',
      '    instruction: i',
    ].join('\n'),
    't.yaml',
  ).issues;
  assert.equal(issues.length, 1, JSON.stringify(issues));
  assert.equal(issues[0].line, 5);
  assert.equal(issues[0].field, 'context_thresholds.force_transition');
  assert.match(issues[0].message, /force_transition 0\.8 is not above prompt 0\.85 \(default\)/);
});

test('lintPiece tolerates malformed input and leaves it to the schema', () => {
  assert.deepEqual(lintPiece(null), []);
  assert.deepEqual(lintPiece('text'), []);
  assert.deepEqual(lintPiece({ movements: 'nope' }), []);
  assert.deepEqual(lintPiece({ initial_movement: 'a', movements: [{ name: 'a', rules: [{ next: 42 }] }] }), []);
});
