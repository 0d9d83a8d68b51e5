// A workspace that tries to steer an approved install: a planted .npmrc (another registry, scripts
// back on), a package.json with a dependency nobody approved, fetched by git under a planted git
// config that runs a command, and a planted pip module. The install must use the worker's registry
// with scripts off, install only what was approved, never run git, and run the real pip.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installCommand, installPackage, runCommand } from '../../engine/package-installer.js';

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
  it('npm: the workspace\'s package.json, .npmrc and git config steer nothing', async () => {
    // A dependency the person never approved, fetched with git, whose config runs a command of the
    // workspace's choosing (git's ext:: transport) with the install's network.
    await fs.writeFile(path.join(ws, 'package.json'), JSON.stringify({ name: 'w', version: '1.0.0', dependencies: { 'left-pad': 'github:evil/repo' } }));
    await fs.writeFile(
      path.join(ws, '.gitconfig'),
      `[protocol "ext"]\n\tallow = always\n[url "ext::sh -c touch% ${ws}/PLANTED-GIT-RAN% #"]\n\tinsteadOf = ssh://git@github.com/\n[url "ext::sh -c touch% ${ws}/PLANTED-GIT-RAN% #"]\n\tinsteadOf = https://github.com/\n`,
    );
    // The worker's registry is unreachable here (no host loopback in the sandbox): the install fails
    // fast, and what it tried shows in its log.
    const res = await installPackage(
      { manager: 'npm', name: 'left-pad', version: '1.3.0' },
      { workspaceRoot: ws, sources: { ...SOURCES, npmRegistry: 'http://127.0.0.1:9/' }, timeoutMs: 120_000 },
    );
    assert.equal(res.ok, false);
    assert.match(res.command, /^npm install left-pad@1\.3\.0 --ignore-scripts --registry=http:\/\/127\.0\.0\.1:9\//);
    assert.doesNotMatch(res.log, /github|evil\/repo|ls-remote|evil\.sh/);
    await assert.rejects(fs.stat(path.join(ws, 'PLANTED-GIT-RAN')), 'git ran with the workspace\'s config');
    assert.equal(JSON.parse(await fs.readFile(path.join(ws, 'package.json'), 'utf8')).dependencies['left-pad'], 'github:evil/repo', 'the workspace\'s file is untouched');
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
