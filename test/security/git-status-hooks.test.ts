// git config planted in a workspace (hooks, fsmonitor, clean/smudge filters, textconv, external diff,
// a submodule's own filter) must not make the next movement's git status run anything or lie. Run
// unsandboxed too (MAESTRO_SANDBOX=none): the neutralised config must hold by itself, so a marker
// file outside the workspace proves whether a planted command ran.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../config/config.js';
import { describeGitStatus } from '../../engine/git-status.js';
import { configureSandbox } from '../../engine/sandbox/index.js';

let base: string;
let ws: string;
let markers: string;
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'protocol.file.allow=always', ...args], { cwd, stdio: 'pipe' });

before(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-git-sec-')));
  ws = path.join(base, 'ws');
  markers = path.join(base, 'markers');
  await fs.mkdir(markers);
  // A submodule with a filter of its own, set up before anything is planted.
  const lib = path.join(base, 'lib');
  await fs.mkdir(lib);
  git(lib, 'init', '-q');
  await fs.writeFile(path.join(lib, 'f.txt'), 'lib\n');
  await fs.writeFile(path.join(lib, '.gitattributes'), 'f.txt filter=subevil\n');
  git(lib, 'add', '.');
  git(lib, 'commit', '-qm', 'lib');
  await fs.mkdir(ws);
  git(ws, 'init', '-q');
  await fs.writeFile(path.join(ws, 'tracked.txt'), 'one\n');
  git(ws, 'add', 'tracked.txt');
  git(ws, 'submodule', '--quiet', 'add', lib, 'sub');
  git(ws, 'commit', '-qm', 'first');
  // Now plant, as a model with Bash would.
  const mark = (name: string) => `touch ${markers}/${name}`;
  const cfg = (repo: string, key: string, value: string) => git(repo, 'config', key, value);
  cfg(ws, 'core.fsmonitor', `sh -c '${mark('fsmonitor')}'`);
  cfg(ws, 'core.hooksPath', '.hooks');
  cfg(ws, 'core.pager', mark('pager'));
  cfg(ws, 'diff.external', mark('external'));
  cfg(ws, 'filter.evil.clean', `sh -c '${mark('clean')}; cat'`);
  cfg(ws, 'diff.evil.textconv', `sh -c '${mark('textconv')}; echo PWNED-TEXTCONV'`);
  cfg(path.join(ws, 'sub'), 'filter.subevil.clean', `sh -c '${mark('subfilter')}; cat >/dev/null; echo forged'`);
  await fs.mkdir(path.join(ws, '.hooks'));
  for (const hook of ['post-index-change', 'pre-commit', 'reference-transaction']) {
    await fs.writeFile(path.join(ws, '.hooks', hook), `#!/bin/sh\n${mark(hook)}\n`, { mode: 0o755 });
  }
  await fs.writeFile(path.join(ws, '.gitattributes'), '* filter=evil diff=evil\n');
  await fs.appendFile(path.join(ws, 'tracked.txt'), 'two\n');
  await fs.writeFile(path.join(ws, 'sub', 'f.txt'), 'changed in the submodule\n');
});

after(async () => {
  configureSandbox(loadConfig().sandbox);
  await fs.rm(base, { recursive: true, force: true });
});

describe('git status of a hostile workspace', () => {
  for (const mode of ['none', 'bwrap'] as const) {
    it(`runs no planted command and reports the real change (MAESTRO_SANDBOX=${mode})`, async () => {
      configureSandbox({ ...loadConfig().sandbox, mode });
      const text = await describeGitStatus(ws);
      assert.match(text, / M tracked\.txt/);
      assert.match(text, /\+two/);
      assert.doesNotMatch(text, /PWNED-TEXTCONV|forged/);
      assert.deepEqual(await fs.readdir(markers), [], 'no planted command ran');
    });
  }

  it('the same workspace does run planted commands under a plain git status (the test is real)', async () => {
    execFileSync('git', ['status', '--short'], { cwd: ws, stdio: 'pipe' });
    execFileSync('git', ['diff'], { cwd: ws, stdio: 'pipe' });
    const ran = await fs.readdir(markers);
    for (const m of ['fsmonitor', 'clean', 'external', 'post-index-change']) assert.ok(ran.includes(m), `${m} ran under plain git (${ran.join(',')})`);
  });
});
