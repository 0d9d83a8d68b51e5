import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readUpTo } from '../../engine/tools/safe-fs.js';
import { LIST_DIR_CAP, listDir, prepareWorkspace, Workspace, WorkspaceFileError, WorkspaceViolationError } from '../../engine/tools/workspace.js';

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

async function readVia(p: string): Promise<string> {
  const f = await ws.openFile(p);
  try {
    return (await readUpTo(f.fh, f.size)).toString('utf8');
  } finally {
    await f.fh.close();
  }
}

async function refusedOpen(p: string, open: (p: string) => Promise<unknown> = (q) => ws.openFile(q)): Promise<Error> {
  const err = await open(p).then(
    () => assert.fail(`expected ${p} to be refused`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkspaceViolationError || err instanceof WorkspaceFileError, `refusal for ${p}, got ${String(err)}`);
  return err;
}

describe('open-time confinement', () => {
  it('opens files inside, also through links that stay inside', async () => {
    assert.equal(await readVia('input/a.txt'), 'a');
    assert.equal(await readVia('dir-in/f.txt'), 'f');
    assert.equal((await ws.openFile('dir-in/f.txt').then(async (f) => (await f.fh.close(), f))).rel, path.join('real-dir', 'f.txt'));
  });

  it('refuses links out at the leaf, in the middle, chained and dangling', async () => {
    for (const p of ['leaf-out', 'dir-out/secret.txt', 'chain-out', 'dangling-out']) {
      assert.ok((await refusedOpen(p)) instanceof WorkspaceViolationError, p);
    }
  });

  it('refuses /proc tricks, NUL bytes and absolute paths outside', async () => {
    for (const p of [
      `/proc/self/root${path.join(outside, 'secret.txt')}`,
      `/proc/self/root${ws.root}/input/a.txt`,
      '/proc/self/cwd/package.json',
      '/proc/self/environ',
      '/dev/zero',
      'input/a.txt\0x',
      path.join(outside, 'secret.txt'),
    ]) {
      const err = await refusedOpen(p);
      assert.ok(err instanceof WorkspaceViolationError, p);
    }
    assert.match((await refusedOpen('/proc/self/environ')).message, /\/proc, \/sys and \/dev are never reachable/);
  });

  it('refuses a link to /proc/self/root or to a device even though the link sits inside', async () => {
    await fs.symlink(`/proc/self/root${path.join(outside, 'secret.txt')}`, path.join(ws.root, 'proc-link'));
    await fs.symlink('/dev/zero', path.join(ws.root, 'zero-link'));
    for (const p of ['proc-link', 'zero-link']) assert.ok((await refusedOpen(p)) instanceof WorkspaceViolationError, p);
    assert.ok((await refusedOpen('zero-link', (q) => ws.openFileForWrite(q, { create: true }))) instanceof WorkspaceViolationError);
  });

  it('refuses FIFOs, sockets and directories without blocking', async () => {
    execFileSync('mkfifo', [path.join(ws.root, 'pipe')]);
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(path.join(ws.root, 'sock'), r));
    try {
      const started = Date.now();
      for (const [p, kind] of [['pipe', /named pipe/], ['sock', /socket/], ['input', /is a directory/]] as const) {
        const read = await refusedOpen(p);
        assert.match(read.message, kind);
        assert.ok(read instanceof WorkspaceFileError);
        const write = await refusedOpen(p, (q) => ws.openFileForWrite(q, { create: true }));
        assert.match(write.message, kind);
      }
      assert.ok(Date.now() - started < 2_000, 'no open blocked');
    } finally {
      server.close();
    }
  });

  it('opens for write without truncating, creating parents only inside', async () => {
    await fs.writeFile(path.join(ws.root, 'keep.txt'), 'kept');
    const f = await ws.openFileForWrite('keep.txt', { create: true });
    await f.fh.close();
    assert.equal(f.created, false);
    assert.equal(await fs.readFile(path.join(ws.root, 'keep.txt'), 'utf8'), 'kept');
    const n = await ws.openFileForWrite('new-dir/deeper/n.txt', { create: true });
    await n.fh.close();
    assert.equal(n.created, true);
    assert.ok((await fs.stat(path.join(ws.root, 'new-dir', 'deeper', 'n.txt'))).isFile());
    const viaLink = await ws.openFileForWrite('dangling-in', { create: true });
    await viaLink.fh.close();
    assert.equal(viaLink.abs, path.join(ws.root, 'real-dir', 'new.txt'));
    await refusedOpen('missing/x.txt', (q) => ws.openFileForWrite(q, { create: false }));
  });

  it('never writes or creates outside through links', async () => {
    const before = await fs.readdir(outside);
    for (const p of ['leaf-out', 'dangling-out', 'dir-out/new.txt', 'dir-out/sub/new.txt', 'chain-out']) {
      assert.ok((await refusedOpen(p, (q) => ws.openFileForWrite(q, { create: true }))) instanceof WorkspaceViolationError, p);
    }
    assert.deepEqual(await fs.readdir(outside), before);
    assert.equal(await fs.readFile(path.join(outside, 'secret.txt'), 'utf8'), 'secret');
  });

  it('readText caps the size; appendText appends', async () => {
    await ws.appendText('logs/x/log.txt', 'one\n');
    await ws.appendText('logs/x/log.txt', 'two\n');
    assert.equal(await ws.readText('logs/x/log.txt', 100), 'one\ntwo\n');
    const big = await ws.readText('logs/x/log.txt', 3).catch((e: unknown) => e);
    assert.ok(big instanceof WorkspaceFileError && big.kind === 'too_large');
  });

  it('listFiles walks without following links and lists regular files only', async () => {
    const { files, complete } = await ws.listFiles('.', { cap: 1000 });
    assert.equal(complete, true);
    assert.ok(files.includes(path.join('real-dir', 'f.txt')));
    assert.ok(!files.some((f) => f.startsWith('dir-out') || f.startsWith('dir-in') || f === 'leaf-out' || f === 'pipe'), files.join(','));
    assert.equal((await ws.listFiles('.', { cap: 1 })).complete, false);
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

  it('does not list through a link out of the workspace', async () => {
    const other = await prepareWorkspace(path.join(base, 'linked'));
    await fs.rm(path.join(other.root, 'input'), { recursive: true });
    await fs.symlink(outside, path.join(other.root, 'input'));
    await fs.symlink(outside, path.join(other.root, 'output', 'out-link'));
    await fs.writeFile(path.join(other.root, 'output', 'mine.txt'), '');
    assert.deepEqual(await listDir(other, 'input'), []);
    assert.deepEqual(await listDir(other, 'output'), ['output/mine.txt']);
  });

  it('returns nothing for a missing directory', async () => {
    await fs.mkdir(path.join(base, 'bare'));
    assert.deepEqual(await listDir(new Workspace(path.join(base, 'bare')), 'output'), []);
  });
});
