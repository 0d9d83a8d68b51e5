import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { describeGitStatus } from '../../engine/git-status.js';

test('git status of the workspace repository only, with a diff excerpt', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-git-'));
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, stdio: 'pipe' });
  try {
    git(dir, 'init', '-q');
    await writeFile(path.join(dir, 'a.txt'), 'one\n');
    git(dir, 'add', 'a.txt');
    git(dir, 'commit', '-qm', 'first');
    await writeFile(path.join(dir, 'a.txt'), 'one\ntwo\n');
    await writeFile(path.join(dir, 'new.txt'), 'new\n');
    const text = await describeGitStatus(dir);
    assert.match(text, / M a\.txt/);
    assert.match(text, /\?\? new\.txt/);
    assert.match(text, /\+two/);

    const nested = path.join(dir, 'workspaces', 'job');
    await mkdir(nested, { recursive: true });
    assert.equal(await describeGitStatus(nested), '(the workspace is not a git repository)');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
