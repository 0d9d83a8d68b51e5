// A hostile model fuzzes the file tools' paths and glob patterns against a workspace full of traps:
// links in and out (at the leaf, in the middle, chained, dangling, through /proc/self/root), a FIFO,
// a link to a device, and a secret beside the workspace. Whatever it asks, every result comes from
// inside the workspace, the secret never shows, and nothing outside changes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { executeTool, FILE_TOOLS } from '../../engine/tools/index.js';
import type { ToolContext, ToolOutput } from '../../engine/tools/tool.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';

const SECRET = `TOPSECRET-${randomBytes(8).toString('hex')}`;
let base: string;
let ws: Workspace;
let secretFile: string;
let outsideDir: string;
let outsideSnapshot: string;

async function snapshot(): Promise<string> {
  // Everything beside the workspace: names and contents (the secret stays as it is, nothing appears).
  const lines: string[] = [];
  for (const dir of [base, outsideDir]) {
    for (const name of (await fs.readdir(dir)).sort()) {
      const p = path.join(dir, name);
      const st = await fs.lstat(p);
      lines.push(`${p} ${st.isFile() ? await fs.readFile(p, 'utf8') : st.isDirectory() ? 'dir' : 'other'}`);
    }
  }
  return lines.join('\n');
}

before(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-fuzz-')));
  secretFile = path.join(base, 'secret.txt');
  outsideDir = path.join(base, 'outside');
  await fs.writeFile(secretFile, `${SECRET}\n`);
  await fs.mkdir(outsideDir);
  await fs.writeFile(path.join(outsideDir, 'leak.txt'), `${SECRET} in a directory\n`);
  await fs.writeFile(path.join(outsideDir, 'pic.png'), SECRET);
  ws = await prepareWorkspace(path.join(base, 'job'));
  const r = ws.root;
  await fs.mkdir(path.join(r, 'src', 'deep'), { recursive: true });
  await fs.writeFile(path.join(r, 'a.txt'), 'INSIDE a\n');
  await fs.writeFile(path.join(r, 'src', 'b.ts'), 'INSIDE b\n');
  await fs.writeFile(path.join(r, 'src', 'deep', 'c.md'), 'INSIDE c\n');
  await fs.writeFile(path.join(r, 'input', 'é 🎉.txt'), 'INSIDE unicode\n');
  await fs.writeFile(path.join(r, 'img.png'), 'INSIDE not really a png');
  const links: Array<[string, string]> = [
    ['link-out', secretFile],
    ['dir-out', outsideDir],
    ['rel-out', '../secret.txt'],
    ['dangling-out', path.join(outsideDir, 'missing.txt')],
    ['chain-out', 'link-out'],
    ['proc-out', `/proc/self/root${secretFile}`],
    ['proc-cwd', '/proc/self/cwd'],
    ['zero', '/dev/zero'],
    ['pic-out.png', path.join(outsideDir, 'pic.png')],
    ['link-in', 'a.txt'],
    ['dir-in', 'src'],
    ['loop-a', 'loop-b'],
    ['loop-b', 'loop-a'],
  ];
  for (const [name, target] of links) await fs.symlink(target, path.join(r, name));
  await fs.symlink(outsideDir, path.join(r, 'src', 'deep', 'up-out'));
  execFileSync('mkfifo', [path.join(r, 'fifo')]);
  outsideSnapshot = await snapshot();
});

after(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function ctx(): ToolContext {
  return { jobId: 'fuzz', workspace: ws, signal: new AbortController().signal, budgetTokens: 4_000 };
}
function call(name: string, args: unknown): Promise<ToolOutput> {
  const def = FILE_TOOLS.find((t) => t.name === name);
  assert.ok(def);
  return executeTool(def, JSON.stringify(args), ctx());
}

const segment = fc.oneof(
  fc.constantFrom('..', '.', '', 'a.txt', 'src', 'deep', 'c.md', 'input', 'output', 'é 🎉.txt', 'fifo', 'zero', 'img.png'),
  fc.constantFrom('link-out', 'dir-out', 'rel-out', 'dangling-out', 'chain-out', 'proc-out', 'proc-cwd', 'pic-out.png', 'up-out', 'loop-a'),
  fc.constantFrom('link-in', 'dir-in', 'secret.txt', 'outside', 'leak.txt', 'job', '**', '*', '{..,src}', '.{.}', '+(..)', '@(..|x)', '!(a)', '[.][.]'),
  fc.constantFrom('\0', '\\..', '%2e%2e', '~', ' ', '..\u2215', '\u202e'),
  fc.string({ maxLength: 6 }),
);
const prefix = fc.constantFrom('', '/', './', '/proc/self/root', '/proc/self/cwd', '/proc/self/fd/0', 'ROOT', 'BASE', '//');
const fuzzPath = fc.tuple(prefix, fc.array(segment, { minLength: 0, maxLength: 6 })).map(([pre, segs]) => {
  const joined = segs.join('/');
  if (pre === 'ROOT') return `${ws.root}/${joined}`;
  if (pre === 'BASE') return `${base}/${joined}`;
  return pre === '' ? joined : `${pre}/${joined}`;
});

function assertNoSecret(out: ToolOutput, what: string): void {
  assert.ok(!out.content.includes(SECRET), `${what} leaked the secret: ${out.content.slice(0, 300)}`);
  for (const img of out.images ?? []) assert.ok(!Buffer.from(img.base64, 'base64').toString('utf8').includes(SECRET), `${what} leaked it as an image`);
}

/** A listed path is workspace-relative, and what it names really lies inside. */
async function assertInside(rel: string, what: string): Promise<void> {
  assert.ok(!path.isAbsolute(rel) && !rel.split('/').includes('..'), `${what} listed ${rel}`);
  const real = await fs.realpath(path.join(ws.root, rel));
  assert.ok(real === ws.root || real.startsWith(ws.root + path.sep), `${what} listed ${rel} -> ${real}`);
}

const RUNS = { numRuns: 150, seed: Number(process.env.FUZZ_SEED ?? 7_070_707) };

describe('file tools under fuzzed paths', () => {
  it('Read and ReadImage return only workspace content', async () => {
    await fc.assert(
      fc.asyncProperty(fuzzPath, async (p) => {
        const read = await call('Read', { path: p });
        assertNoSecret(read, `Read ${JSON.stringify(p)}`);
        if (!read.isError && !/is empty\)/.test(read.content)) assert.match(read.content, /INSIDE/, `Read ${JSON.stringify(p)}`);
        const img = await call('ReadImage', { path: p });
        assertNoSecret(img, `ReadImage ${JSON.stringify(p)}`);
        if (!img.isError) assert.ok(Buffer.from(img.images![0].base64, 'base64').toString('utf8').startsWith('INSIDE'));
      }),
      RUNS,
    );
  });

  it('Glob lists only files inside, whatever the pattern', async () => {
    const pattern = fc.array(segment.filter((s) => s !== '\0'), { minLength: 1, maxLength: 4 }).map((s) => s.join('/') || '*');
    await fc.assert(
      fc.asyncProperty(pattern, fc.option(fuzzPath, { nil: undefined }), async (pat, p) => {
        const out = await call('Glob', { pattern: pat, ...(p === undefined ? {} : { path: p }) });
        assertNoSecret(out, `Glob ${pat} in ${p}`);
        if (out.isError || out.content.startsWith('no files match')) return;
        for (const line of out.content.split('\n')) {
          if (line.startsWith('... and ') || line.startsWith('[')) continue;
          await assertInside(line, `Glob ${JSON.stringify(pat)} in ${JSON.stringify(p)}`);
        }
      }),
      RUNS,
    );
  });

  it('Grep finds only what is inside, whatever the path and glob', async () => {
    const glob = fc.option(fc.array(segment.filter((s) => s !== '\0' && s !== ''), { minLength: 1, maxLength: 3 }).map((s) => s.join('/')), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.option(fuzzPath, { nil: undefined }), glob, async (p, g) => {
        const out = await call('Grep', { pattern: 'SECRET|INSIDE', ...(p === undefined ? {} : { path: p }), ...(g === undefined ? {} : { glob: g }) });
        assertNoSecret(out, `Grep in ${p} glob ${g}`);
        if (out.isError || out.content.startsWith('no matches')) return;
        for (const line of out.content.split('\n')) {
          if (line.startsWith('[')) continue;
          const m = /^(.*?):(\d+): INSIDE/.exec(line);
          assert.ok(m, `Grep in ${JSON.stringify(p)} gave ${line}`);
          await assertInside(m[1], `Grep in ${JSON.stringify(p)}`);
        }
      }),
      RUNS,
    );
  });

  it('Write and Edit never change anything outside', async () => {
    await fc.assert(
      fc.asyncProperty(fuzzPath, async (p) => {
        const w = await call('Write', { path: p, content: 'INSIDE written by the fuzzer\n' });
        assertNoSecret(w, `Write ${JSON.stringify(p)}`);
        const e = await call('Edit', { path: p, old_string: 'INSIDE', new_string: 'INSIDE!', replace_all: true });
        assertNoSecret(e, `Edit ${JSON.stringify(p)}`);
        const e2 = await call('Edit', { path: p, old_string: SECRET, new_string: 'gone' });
        assertNoSecret(e2, `Edit ${JSON.stringify(p)}`);
        assert.equal(e2.isError, true, 'the secret is never found by Edit');
      }),
      RUNS,
    );
    assert.equal(await snapshot(), outsideSnapshot, 'nothing beside the workspace changed');
  });
});
