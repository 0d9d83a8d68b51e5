import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LIST_DIR_CAP, listDir, prepareWorkspace, Workspace, WorkspaceViolationError } from '../../engine/tools/workspace.js';

let base: string;
let ws: Workspace;
let outside: string;

before(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-ws-'));
  outside = path.join(base, 'outside');
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, 'secret.txt'), 'secret');
  ws = await prepareWorkspace(path.join(base, 'job'));
  const root = ws.root;
  await fs.writeFile(path.join(root, 'input', 'a.txt'), 'a');
  await fs.mkdir(path.join(root, 'real-dir'));
  await fs.writeFile(path.join(root, 'real-dir', 'f.txt'), 'f');
  await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'leaf-out'));
  await fs.symlink(outside, path.join(root, 'dir-out'));
  await fs.symlink(path.join(outside, 'does-not-exist.txt'), path.join(root, 'dangling-out'));
  await fs.symlink('real-dir', path.join(root, 'dir-in'));
  await fs.symlink('real-dir/new.txt', path.join(root, 'dangling-in'));
  await fs.symlink('leaf-out', path.join(root, 'chain-out'));
});

after(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

async function refused(p: string): Promise<WorkspaceViolationError> {
  const err = await ws.resolve(p).then(
    (r) => assert.fail(`expected ${p} to be refused, got ${r}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkspaceViolationError, `expected WorkspaceViolationError for ${p}, got ${String(err)}`);
  assert.match(err.message, /is outside the job workspace/);
  assert.match(err.message, /use paths relative to the workspace$/);
  assert.ok(err.message.includes(p), 'the message names the path the model asked for');
  return err;
}

describe('Workspace.resolve', () => {
  it('prepares input/, output/ and logs/', async () => {
    for (const d of ['input', 'output', 'logs']) assert.ok((await fs.stat(path.join(ws.root, d))).isDirectory());
  });

  it('resolves relative paths against the real root', async () => {
    assert.equal(await ws.resolve('input/a.txt'), path.join(ws.root, 'input', 'a.txt'));
    assert.equal(await ws.resolve('.'), ws.root);
    assert.equal(await ws.resolve(''), ws.root);
    assert.equal(await ws.resolve('input/../input/a.txt'), path.join(ws.root, 'input', 'a.txt'));
  });

  it('refuses .. escaping the root', async () => {
    await refused('../x');
    await refused('input/../../outside/secret.txt');
  });

  it('refuses absolute paths outside the root', async () => {
    await refused('/etc/passwd');
    await refused(path.join(outside, 'secret.txt'));
  });

  it('accepts absolute paths inside the root', async () => {
    assert.equal(await ws.resolve(path.join(ws.root, 'input', 'a.txt')), path.join(ws.root, 'input', 'a.txt'));
  });

  it('refuses a symlink to outside at the leaf', async () => {
    const err = await refused('leaf-out');
    assert.match(err.message, /symbolic link/);
  });

  it('refuses a symlink to outside in a middle component, for existing and new files', async () => {
    await refused('dir-out/secret.txt');
    await refused('dir-out/new/file.txt');
  });

  it('refuses a dangling symlink that points outside', async () => {
    await refused('dangling-out');
  });

  it('refuses a chain of links that ends outside', async () => {
    await refused('chain-out');
  });

  it('follows symlinks that stay inside', async () => {
    assert.equal(await ws.resolve('dir-in/f.txt'), path.join(ws.root, 'real-dir', 'f.txt'));
    assert.equal(await ws.resolve('dangling-in'), path.join(ws.root, 'real-dir', 'new.txt'));
  });

  it('accepts a new file in a new subdirectory', async () => {
    assert.equal(await ws.resolve('output/new/deeper/file.md'), path.join(ws.root, 'output', 'new', 'deeper', 'file.md'));
  });

  it('works when the root itself is reached through a symlink', async () => {
    const link = path.join(base, 'link-to-job');
    await fs.symlink(path.join(base, 'job'), link);
    const viaLink = new Workspace(link);
    assert.equal(await viaLink.resolve('input/a.txt'), path.join(ws.root, 'input', 'a.txt'));
    // Absolute paths through the link as given are inside too.
    assert.equal(await viaLink.resolve(path.join(link, 'input', 'a.txt')), path.join(ws.root, 'input', 'a.txt'));
    assert.equal(viaLink.relative(path.join(link, 'input', 'a.txt')), path.join('input', 'a.txt'));
  });

  it('realpaths a root created after the Workspace object', async () => {
    const later = new Workspace(path.join(base, 'later'));
    await fs.mkdir(path.join(base, 'later'));
    assert.equal(await later.resolve('x.txt'), path.join(await fs.realpath(path.join(base, 'later')), 'x.txt'));
    await assert.rejects(later.resolve('../job/input/a.txt'), WorkspaceViolationError);
  });

  it('relative() gives workspace-relative paths', () => {
    assert.equal(ws.relative(path.join(ws.root, 'output', 'x.txt')), path.join('output', 'x.txt'));
    assert.equal(ws.relative(ws.root), '.');
  });
});

describe('listDir', () => {
  it('lists files recursively, sorted, relative to the workspace', async () => {
    await fs.mkdir(path.join(ws.root, 'output', 'sub'), { recursive: true });
    await fs.writeFile(path.join(ws.root, 'output', 'z.txt'), '');
    await fs.writeFile(path.join(ws.root, 'output', 'sub', 'b.txt'), '');
    await fs.writeFile(path.join(ws.root, 'output', 'a.txt'), '');
    assert.deepEqual(await listDir(ws, 'output'), ['output/a.txt', 'output/sub/b.txt', 'output/z.txt']);
    assert.deepEqual(await listDir(ws, 'input'), ['input/a.txt']);
  });

  it('caps long listings with a count of the rest', async () => {
    const many = await prepareWorkspace(path.join(base, 'many'));
    const n = LIST_DIR_CAP + 37;
    await Promise.all(Array.from({ length: n }, (_, i) => fs.writeFile(path.join(many.root, 'input', `f${String(i).padStart(4, '0')}.txt`), '')));
    const list = await listDir(many, 'input');
    assert.equal(list.length, LIST_DIR_CAP + 1);
    assert.equal(list[0], 'input/f0000.txt');
    assert.equal(list[LIST_DIR_CAP], '... 37 more');
  });

  it('returns nothing for a missing directory', async () => {
    await fs.mkdir(path.join(base, 'bare'));
    assert.deepEqual(await listDir(new Workspace(path.join(base, 'bare')), 'output'), []);
  });
});
