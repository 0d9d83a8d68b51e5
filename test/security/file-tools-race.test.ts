// Check-then-open races, FIFOs, sockets, devices and catastrophic regexes against the file tools.
// A separate process swaps symlinks between an inside file (or directory) and an outside secret as
// fast as it can while the tools run: whatever the interleaving, no result holds the secret and
// nothing outside is written. Non-regular files are refused without blocking, and a backtracking
// bomb of a pattern returns quickly (ripgrep's engine is linear-time).
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { executeTool, FILE_TOOLS } from '../../engine/tools/index.js';
import type { ToolOutput } from '../../engine/tools/tool.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';
import { waitFor } from '../helpers/wait-for.js';

const SECRET = `RACESECRET-${randomBytes(8).toString('hex')}`;
let base: string;
let ws: Workspace;
let outside: string;
let swapper: ChildProcess | undefined;

function call(name: string, args: unknown): Promise<ToolOutput> {
  const def = FILE_TOOLS.find((t) => t.name === name);
  assert.ok(def);
  return executeTool(def, JSON.stringify(args), { jobId: 'race', workspace: ws, signal: new AbortController().signal, budgetTokens: 4_000 });
}

async function outsideState(): Promise<string> {
  const names = (await fs.readdir(outside)).sort();
  return JSON.stringify(await Promise.all(names.map(async (n) => [n, await fs.readFile(path.join(outside, n), 'utf8')])));
}

before(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-race-')));
  outside = path.join(base, 'outside');
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, 'secret.txt'), `${SECRET}\n`);
  await fs.writeFile(path.join(outside, 'inner.txt'), `${SECRET} inner\n`);
  ws = await prepareWorkspace(path.join(base, 'job'));
  await fs.writeFile(path.join(ws.root, 'inside.txt'), 'INSIDE ping\n');
  await fs.mkdir(path.join(ws.root, 'real'));
  await fs.writeFile(path.join(ws.root, 'real', 'inner.txt'), 'INSIDE inner\n');
  await fs.symlink('inside.txt', path.join(ws.root, 'swap'));
  await fs.symlink('real', path.join(ws.root, 'swapdir'));
});

after(async () => {
  if (swapper?.pid !== undefined && swapper.exitCode === null) swapper.kill('SIGKILL');
  await fs.rm(base, { recursive: true, force: true });
});

/** Starts a process that atomically flips `swap` and `swapdir` between inside and outside targets. */
async function startSwapper(): Promise<{ swaps: () => Promise<number> }> {
  const counter = path.join(base, 'swaps');
  const script = `
    const fs = require('fs'); const path = require('path');
    const [root, outside, counter] = process.argv.slice(1);
    const pairs = [['swap', 'inside.txt', path.join(outside, 'secret.txt')], ['swapdir', 'real', outside]];
    for (let i = 0; ; i++) {
      for (const [name, inTarget, outTarget] of pairs) {
        const tmp = path.join(root, name + '.tmp');
        try { fs.unlinkSync(tmp); } catch {}
        fs.symlinkSync(i % 2 ? outTarget : inTarget, tmp);
        fs.renameSync(tmp, path.join(root, name));
      }
      if (i % 1000 === 0) fs.writeFileSync(counter, String(i));
    }`;
  swapper = spawn(process.execPath, ['-e', script, ws.root, outside, counter], { stdio: 'ignore' });
  const swaps = async () => Number(await fs.readFile(counter, 'utf8').catch(() => '0'));
  await waitFor(async () => (await swaps()) >= 1000, { timeoutMs: 10_000, message: 'the swapper is running' });
  return { swaps };
}

describe('symlink swapped during file tool calls', () => {
  it('never returns the secret and never writes outside', async () => {
    const before = await outsideState();
    const { swaps } = await startSwapper();
    const seen = { readOk: 0, readRefused: 0, writes: 0 };
    const started = await swaps();
    for (let i = 0; i < 150; i++) {
      const results = await Promise.all([
        call('Read', { path: 'swap' }),
        call('Read', { path: 'swapdir/inner.txt' }),
        call('ReadImage', { path: 'swap' }),
        call('Write', { path: 'swap', content: `INSIDE write ${i}\n` }),
        call('Write', { path: `swapdir/new-${i}.txt`, content: `INSIDE new ${i}\n` }),
        call('Edit', { path: 'swap', old_string: 'write', new_string: 'wrote' }),
        call('Edit', { path: 'swapdir/inner.txt', old_string: i % 2 ? 'INNER' : 'inner', new_string: i % 2 ? 'inner' : 'INNER' }),
        call('Grep', { pattern: 'SECRET|INSIDE', path: 'swap' }),
        call('Grep', { pattern: 'SECRET|INSIDE', path: 'swapdir' }),
        call('Glob', { pattern: '**/*', path: 'swapdir' }),
      ]);
      for (const r of results) assert.ok(!r.content.includes(SECRET), `leak: ${r.content.slice(0, 200)}`);
      if (results[0].isError) seen.readRefused++;
      else if (results[0].content.includes('INSIDE')) seen.readOk++;
      if (!results[3].isError) seen.writes++;
      for (const line of results[9].content.split('\n')) assert.ok(!line.includes('secret.txt'), `Glob listed ${line}`);
    }
    const flips = (await swaps()) - started;
    swapper!.kill('SIGKILL');
    await waitFor(() => swapper!.exitCode !== null || swapper!.signalCode !== null, { message: 'the swapper stopped' });
    assert.ok(flips > 1000, `the links flipped ${flips} times during the calls`);
    assert.ok(seen.readOk > 0 && seen.readRefused > 0, `both sides of the race were hit: ${JSON.stringify(seen)}`);
    assert.equal(await outsideState(), before, 'nothing outside was written or created');
    assert.match(await fs.readFile(path.join(ws.root, 'inside.txt'), 'utf8'), /^INSIDE (write|wrote) \d+\n$/);
  });
});

describe('non-regular files', () => {
  it('FIFOs, sockets and a link to /dev/zero are refused without blocking', async () => {
    execFileSync('mkfifo', [path.join(ws.root, 'fifo')]);
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(path.join(ws.root, 'sock'), r));
    await fs.symlink('/dev/zero', path.join(ws.root, 'zero'));
    try {
      const started = Date.now();
      for (const p of ['fifo', 'sock', 'zero']) {
        for (const [name, args] of [
          ['Read', { path: p }],
          ['Read', { path: p, byte_offset: 0 }],
          ['ReadImage', { path: p }],
          ['Write', { path: p, content: 'x' }],
          ['Edit', { path: p, old_string: 'a', new_string: 'b' }],
          ['Grep', { pattern: 'a', path: p }],
        ] as const) {
          const out = await call(name, args);
          assert.equal(out.isError, true, `${name} ${p}: ${out.content}`);
          assert.match(out.content, /named pipe|socket|outside the job workspace|not a supported image/, `${name} ${p}`);
        }
      }
      // A walk over a directory holding them skips them.
      assert.match((await call('Grep', { pattern: 'zzz-nothing' })).content, /no matches/);
      assert.doesNotMatch((await call('Glob', { pattern: '*' })).content, /fifo|sock|zero/);
      assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
    } finally {
      server.close();
    }
  });
});

describe('regex denial of service', () => {
  it('a catastrophic-backtracking pattern on a long line returns quickly', async () => {
    await fs.writeFile(path.join(ws.root, 'bomb.txt'), `${'a'.repeat(200_000)}b\n${'x'.repeat(50_000)}\n`);
    for (const pattern of ['(a+)+$', '(a|aa)+$', '(x+x+)+y', '^(a*)*$']) {
      const started = Date.now();
      const out = await call('Grep', { pattern, path: 'bomb.txt' });
      const ms = Date.now() - started;
      assert.equal(out.isError, undefined, out.content);
      assert.match(out.content, /no matches/, pattern);
      assert.ok(ms < 5_000, `${pattern} took ${ms} ms`);
    }
  });
});
