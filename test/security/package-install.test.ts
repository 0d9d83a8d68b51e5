// A workspace that tries to steer an approved install: a planted .npmrc (another registry, scripts
// back on, a script shell of its own) and a planted pip module. The install must use the worker's
// registry with scripts off, and the real pip.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installCommand, runCommand } from '../../engine/package-installer.js';

const SOURCES = { npmRegistry: 'https://npm.operator.test/', pipIndexUrl: 'https://pypi.operator.test/simple', allowApt: false };
let ws: string;

before(async () => {
  ws = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-pkg-sec-'));
  const evil = 'registry=http://127.0.0.1:9/\nignore-scripts=false\nscript-shell=/tmp/evil.sh\n';
  await fs.writeFile(path.join(ws, '.npmrc'), evil);
  await fs.mkdir(path.join(ws, 'pip'));
  await fs.writeFile(path.join(ws, 'pip', '__init__.py'), '');
  await fs.writeFile(path.join(ws, 'pip', '__main__.py'), 'print("PLANTED PIP RAN")\n');
  await fs.writeFile(path.join(ws, 'pip.py'), 'print("PLANTED PIP RAN")\n');
});
after(() => fs.rm(ws, { recursive: true, force: true }));

describe('approved installs ignore what the workspace plants', () => {
  it('npm sees the worker\'s registry with scripts off, not the planted .npmrc', async () => {
    const cmd = installCommand({ manager: 'npm', name: 'is-number' }, ws, SOURCES);
    assert.deepEqual(cmd.hide, ['.npmrc']);
    // The same command line and sandbox as the install, asking npm what configuration it ends up with.
    const probe = { ...cmd, args: ['config', 'list', ...cmd.args.slice(1, -1)] };
    const res = await runCommand(probe, { cwd: ws, timeoutMs: 60_000 });
    assert.equal(res.code, 0, res.output);
    assert.match(res.output, /registry = "https:\/\/npm\.operator\.test\/"/);
    assert.match(res.output, /ignore-scripts = true/);
    assert.doesNotMatch(res.output, /127\.0\.0\.1:9|evil\.sh/);
    assert.equal(await fs.readFile(path.join(ws, '.npmrc'), 'utf8').then((t) => t.includes('evil')), true, 'the file itself is untouched');
  });

  it('pip runs isolated: a pip module planted in the workspace is never imported', async () => {
    const cmd = installCommand({ manager: 'pip', name: 'six' }, ws, SOURCES);
    const probe = { ...cmd, args: [...cmd.args.slice(0, cmd.args.indexOf('install')), '--version'] };
    for (const cwd of [ws]) {
      const res = await runCommand(probe, { cwd, timeoutMs: 60_000 });
      assert.doesNotMatch(res.output, /PLANTED PIP RAN/);
      assert.match(res.output, /pip \d+|No module named pip/);
    }
  });
});
