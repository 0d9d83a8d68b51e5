// The limits on untrusted YAML: each one refused on the token stream, with its line, before a
// document is built; real pieces stay far below them.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { builtinPiecesDir, checkPiece, parsePiece, YamlLimitError } from '../../engine/piece/piece-loader.js';
import { checkYamlLimits, DEFAULT_YAML_LIMITS } from '../../engine/piece/yaml-limits.js';

function billionLaughs(levels: number, width: number): string {
  const lines = [`l0: &l0 [${Array(width).fill('"lol"').join(', ')}]`];
  for (let i = 1; i < levels; i++) lines.push(`l${i}: &l${i} [${Array(width).fill(`*l${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

describe('checkYamlLimits', () => {
  it('passes the built-in pieces with room to spare', async () => {
    for (const f of await readdir(builtinPiecesDir())) {
      const text = await readFile(path.join(builtinPiecesDir(), f), 'utf8');
      assert.equal(checkYamlLimits(text), null, f);
      assert.equal(checkYamlLimits(text, { ...DEFAULT_YAML_LIMITS, maxDepth: 8 }), null, `${f} is shallow`);
    }
  });

  it('refuses 100k nested flow brackets at once, without building anything', () => {
    const t0 = performance.now();
    const v = checkYamlLimits('['.repeat(100_000));
    assert.ok(performance.now() - t0 < 2000);
    assert.equal(v?.limit, 'maxDepth');
    assert.equal(v?.line, 1);
    assert.match(v!.message, /deeper than 48 levels/);
  });

  it('counts block nesting by indentation and compact sequences, and names the line', () => {
    const deep = Array.from({ length: 60 }, (_, i) => `${' '.repeat(i * 2)}k${i}:`).join('\n');
    const v = checkYamlLimits(deep);
    assert.equal(v?.limit, 'maxDepth');
    assert.ok(v!.line > 20 && v!.line <= 49, String(v!.line));
    assert.equal(checkYamlLimits(`a: ${'- '.repeat(60)}x`)?.limit, 'maxDepth');
    assert.equal(checkYamlLimits('a:\n  b:\n    c: [1, {d: e}]\n'), null);
  });

  it('ignores brackets and dashes inside block scalars, quotes and comments', () => {
    const text = `a: |\n  ${'['.repeat(500)}\n  ${'- '.repeat(500)}\nb: "${'{'.repeat(500)}"\n# ${'['.repeat(500)}\n`;
    assert.equal(checkYamlLimits(text), null);
  });

  it('refuses more aliases than the limit, at the line of the one past it', () => {
    const v = checkYamlLimits(billionLaughs(9, 9));
    assert.equal(v?.limit, 'maxAliases');
    assert.equal(v?.line, 7);
    assert.match(v!.message, /more than 50 aliases/);
  });

  it('refuses too many nodes and too many bytes', () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `k${i}: 1`).join('\n');
    assert.equal(checkYamlLimits(keys)?.limit, 'maxNodes');
    const big = checkYamlLimits(`a: "${'x'.repeat(DEFAULT_YAML_LIMITS.maxBytes)}"`);
    assert.equal(big?.limit, 'maxBytes');
    assert.match(big!.message, /over the limit of 524288 bytes/);
  });
});

describe('parsePiece with hostile YAML', () => {
  it('throws YamlLimitError naming the limit and the line', () => {
    assert.throws(
      () => parsePiece(`name: x\nmovements: ${'['.repeat(100_000)}`, 'deep.yaml'),
      (e: unknown) => e instanceof YamlLimitError && e.violation.limit === 'maxDepth' && /^deep\.yaml:2: refused before parsing: .*nesting-depth limit/.test(e.message),
    );
  });

  it('stops a small alias bomb that passes the static count when it expands', () => {
    const text = billionLaughs(5, 5); // 20 aliases, 3125 strings once expanded
    assert.equal(checkYamlLimits(text), null);
    const { issues, limit } = checkPiece(text, 'lol.yaml');
    assert.equal(limit?.limit, 'maxAliases');
    assert.equal(issues.length, 1);
    assert.match(issues[0].message, /alias-expansion limit/);
    assert.equal(issues[0].line, 2);
  });

  it('answers a map of thousands of keys quickly (the duplicate-key check is quadratic)', () => {
    const t0 = performance.now();
    const keys = Array.from({ length: 2400 }, (_, i) => `k${i}: 1`).join('\n');
    checkPiece(keys, 'wide.yaml');
    const ms = performance.now() - t0;
    assert.ok(ms < 1500, `${ms} ms`);
  });
});
