// The one workspace rule for API callers and spawns: strictly inside a root, judged after symlinks,
// refused before anything is created.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveWorkspaceInRoots, WorkspaceRootError } from '../../config/workspace-policy.js';

describe('resolveWorkspaceInRoots', () => {
  let base: string;
  let root: string;
  let second: string;
  before(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'maestro-roots-'));
    root = path.join(base, 'workspaces');
    second = path.join(base, 'projects');
    await mkdir(root);
    await mkdir(second);
    await mkdir(path.join(base, 'outside'));
    await symlink(path.join(base, 'outside'), path.join(root, 'escape'));
    await mkdir(path.join(second, 'p1'));
    await symlink(path.join(second, 'p1'), path.join(root, 'to-second'));
    await symlink(path.join(base, 'nowhere'), path.join(root, 'dangling'));
  });
  after(() => rm(base, { recursive: true, force: true }));

  it('accepts folders inside a root, existing or not, absolute or relative to the first root', async () => {
    assert.equal(await resolveWorkspaceInRoots(path.join(root, 'job-1'), [root]), path.join(root, 'job-1'));
    assert.equal(await resolveWorkspaceInRoots('nested/deeper', [root]), path.join(root, 'nested', 'deeper'));
    assert.equal(await resolveWorkspaceInRoots(path.join(second, 'p1'), [root, second]), path.join(second, 'p1'));
    // A symlink that stays inside some root lands where it points.
    assert.equal(await resolveWorkspaceInRoots(path.join(root, 'to-second', 'x'), [root, second]), path.join(second, 'p1', 'x'));
  });

  it('refuses /, /etc, the root itself, .., symlinks out, NUL, control characters and overlong paths', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/', /not inside a workspace root/],
      ['/etc', /not inside a workspace root/],
      ['/etc/maestro-job', /not inside a workspace root/],
      [root, /is a workspace root itself/],
      [`${root}/`, /is a workspace root itself/],
      [`${root}/../outside`, /"\.\." segment/],
      ['../outside', /"\.\." segment/],
      ['a/../../outside', /"\.\." segment/],
      [path.join(root, 'escape'), /not inside a workspace root/],
      [path.join(root, 'escape', 'deeper', 'still'), /not inside a workspace root/],
      [path.join(root, 'to-second', 'x'), /not inside a workspace root/], // second is not a root here
      [path.join(root, 'dangling'), /symlink that points nowhere/],
      [path.join(root, 'dangling', 'x'), /symlink that points nowhere/],
      [`${root}/job\0`, /NUL/],
      [`${root}/job\nx`, /control character/],
      [`${root}/${'a'.repeat(300)}`, /name longer than 255/],
      [`${root}/${'abc/'.repeat(1100)}`, /longer than 4096 bytes/],
      ['', /is empty/],
      ['   ', /is empty/],
    ];
    for (const [p, why] of cases) {
      await assert.rejects(resolveWorkspaceInRoots(p, [root]), (e: unknown) => {
        assert.ok(e instanceof WorkspaceRootError, `${JSON.stringify(p)}: ${String(e)}`);
        assert.match(e.message, why, JSON.stringify(p));
        assert.ok(!e.message.includes('\0') && !e.message.includes('\n'));
        return true;
      });
    }
    await assert.rejects(resolveWorkspaceInRoots(path.join(root, 'x'), []), /no workspace roots/);
    // Nothing was created by any of the refusals.
    assert.deepEqual((await readdir(root)).sort(), ['dangling', 'escape', 'to-second']);
    assert.deepEqual(await readdir(path.join(base, 'outside')), []);
  });

  it('judges a root that is itself reached through a symlink by its real location', async () => {
    const linkRoot = path.join(base, 'root-link');
    await symlink(root, linkRoot);
    assert.equal(await resolveWorkspaceInRoots(path.join(linkRoot, 'j'), [linkRoot]), path.join(root, 'j'));
    assert.equal(await resolveWorkspaceInRoots(path.join(root, 'j'), [linkRoot]), path.join(root, 'j'));
    await assert.rejects(resolveWorkspaceInRoots(linkRoot, [root]), /workspace root itself/);
  });
});

it('MAESTRO_HOME\'s own state is never a workspace, even when a root contains it', async () => {
  const base = await mkdtemp(path.join(tmpdir(), 'maestro-policy-home-'));
  try {
    const home = { dir: path.join(base, 'home'), workspaces: path.join(base, 'home', 'workspaces') };
    assert.equal(await resolveWorkspaceInRoots(path.join(home.workspaces, 'job'), [base], home), path.join(home.workspaces, 'job'));
    for (const p of [home.dir, path.join(home.dir, 'pgdata'), home.workspaces, path.join(base, 'home', 'tools', 'x')]) {
      await assert.rejects(resolveWorkspaceInRoots(p, [base], home), /overlaps Maestro's own state/, p);
    }
    assert.equal(await resolveWorkspaceInRoots(path.join(base, 'project'), [base], home), path.join(base, 'project'));
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
