// The package installer without installing anything: strict names and versions, argv (never a
// shell), the worker's registries with scripts off, apt only when allowed and as root, and the
// runner's timeout and abort on real (harmless) processes in the sandbox.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  installCommand,
  installPackage,
  installRefusal,
  runCommand,
  validatePackageSpec,
  type CommandRunner,
  type InstallCommand,
  type PackageSpec,
} from '../../engine/package-installer.js';

function recorder(result: { code: number | null; output: string } = { code: 0, output: 'done\n' }) {
  const calls: InstallCommand[] = [];
  const run: CommandRunner = async (cmd) => {
    calls.push(cmd);
    return { ...result, stoppedBy: null };
  };
  return { calls, run };
}

describe('validatePackageSpec', () => {
  const ok: PackageSpec[] = [
    { manager: 'npm', name: 'is-number', version: '7.0.0' },
    { manager: 'npm', name: '@types/node', version: '^20.1.0' },
    { manager: 'npm', name: 'left-pad' },
    { manager: 'pip', name: 'maestro-tiny', version: '1.0.0' },
    { manager: 'pip', name: 'Django', version: '4.2rc1' },
    { manager: 'apt', name: 'libxml2-dev', version: '2.9.14+dfsg-1' },
    { manager: 'apt', name: 'g++', version: '4:12.2.0-3' },
  ];
  for (const spec of ok) it(`accepts ${spec.manager} ${spec.name} ${spec.version ?? ''}`, () => assert.equal(validatePackageSpec(spec), null));

  const bad: PackageSpec[] = [
    { manager: 'npm', name: 'x; rm -rf /' },
    { manager: 'npm', name: '--global' },
    { manager: 'npm', name: 'Upper' },
    { manager: 'npm', name: 'ok', version: '1.0.0 || $(id)' },
    { manager: 'pip', name: '-e' },
    { manager: 'pip', name: 'six==1.16.0' },
    { manager: 'pip', name: '../evil' },
    { manager: 'pip', name: 'six', version: '--index-url=http://x' },
    { manager: 'apt', name: 'a b' },
    { manager: 'apt', name: 'curl`id`' },
    { manager: 'apt', name: 'curl', version: '-o' },
  ];
  for (const spec of bad) {
    it(`refuses ${spec.manager} ${JSON.stringify(spec.name)} ${spec.version ?? ''}`, () => assert.match(validatePackageSpec(spec) ?? '', /not a valid/));
  }
});

const SOURCES = { npmRegistry: 'https://npm.example.test/', pipIndexUrl: 'https://pypi.example.test/simple', allowApt: true };

describe('install commands', () => {
  it('npm and pip install into the workspace from the worker\'s registries, scripts off', () => {
    const npm = installCommand({ manager: 'npm', name: 'is-number', version: '7.0.0' }, '/ws', SOURCES);
    assert.equal(npm.file, 'sh');
    assert.equal(npm.sandboxed, true);
    // A scratch prefix, then a copy into the workspace: the spec and the workspace are arguments, never shell text.
    assert.deepEqual(npm.args.slice(2, 5), ['/tmp/maestro-npm', 'is-number@7.0.0', '/ws']);
    assert.doesNotMatch(npm.args[1], /is-number|\/ws/);
    for (const flag of ['--ignore-scripts', '--git=/bin/false', '--registry=https://npm.example.test/', '--userconfig=/dev/null']) {
      assert.ok(npm.args.includes(flag), flag);
    }
    assert.equal(npm.env?.HOME, '/tmp');
    assert.equal(npm.display, 'npm install is-number@7.0.0 --ignore-scripts --registry=https://npm.example.test/ (into node_modules/)');
    const pip = installCommand({ manager: 'pip', name: 'six', version: '1.16.0' }, '/ws', SOURCES);
    assert.equal(pip.file, 'python3');
    assert.deepEqual(pip.args.slice(0, 4), ['-I', '-m', 'pip', 'install']);
    for (const flag of ['--isolated', '--only-binary=:all:', 'https://pypi.example.test/simple']) assert.ok(pip.args.includes(flag), flag);
    assert.deepEqual(pip.args.slice(-3), ['--target', '/ws/.packages/python', 'six==1.16.0']);
    assert.deepEqual(pip.env, { PIP_CONFIG_FILE: '/dev/null', HOME: '/tmp' });
  });

  it('apt is off unless the operator allows it, and refused for a non-root worker, before anything runs', async () => {
    assert.match(installRefusal('apt', 0, { ...SOURCES, allowApt: false }) ?? '', /turned off/);
    assert.match(installRefusal('apt', 1000, SOURCES) ?? '', /only be installed where the worker runs as root/);
    assert.equal(installRefusal('npm', 1000, SOURCES), null);
    const { calls, run } = recorder();
    const res = await installPackage({ manager: 'apt', name: 'curl' }, { workspaceRoot: '/ws', uid: 1000, run, sources: SOURCES });
    assert.equal(res.ok, false);
    assert.match(res.log, /runs as root/);
    assert.equal(calls.length, 0);
  });

  it('apt as root (allowed): apt-get install -y name=version, non-interactive, outside the sandbox', async () => {
    const { calls, run } = recorder();
    const res = await installPackage({ manager: 'apt', name: 'curl', version: '7.88.1-10' }, { workspaceRoot: '/ws', uid: 0, run, sources: SOURCES });
    assert.equal(res.ok, true);
    assert.deepEqual(calls, [{ file: 'apt-get', args: ['install', '-y', 'curl=7.88.1-10'], env: { DEBIAN_FRONTEND: 'noninteractive' }, sandboxed: false }]);
  });

  it('an invalid name never reaches the runner; a failing install reports its exit code and log tail', async () => {
    const { calls, run } = recorder({ code: 1, output: `${'x'.repeat(10_000)}\nERROR: No matching distribution\n` });
    assert.equal((await installPackage({ manager: 'pip', name: 'a;b' }, { workspaceRoot: '/ws', run, sources: SOURCES })).ok, false);
    assert.equal(calls.length, 0);
    const res = await installPackage({ manager: 'pip', name: 'nope' }, { workspaceRoot: '/ws', run, sources: SOURCES });
    assert.equal(res.ok, false);
    assert.match(res.log, /No matching distribution\n\[exit code 1\]$/);
    assert.ok(res.log.length < 4200, 'only the tail of the log is kept');
    const good = await installPackage({ manager: 'pip', name: 'six' }, { workspaceRoot: '/ws', run: recorder().run, sources: SOURCES });
    assert.match(good.usage ?? '', /PYTHONPATH=\.packages\/python/);
  });
});

describe('runCommand', () => {
  let ws: string;
  before(async () => {
    ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-install-'));
  });
  after(() => rm(ws, { recursive: true, force: true }));
  const node = (code: string): InstallCommand => ({ file: 'node', args: ['-e', code], sandboxed: true });

  it('collects stdout and stderr and the exit code', async () => {
    const res = await runCommand(node('console.log("out"); console.error("err"); process.exit(3)'), { cwd: ws, timeoutMs: 10_000 });
    assert.equal(res.code, 3);
    assert.match(res.output, /out/);
    assert.match(res.output, /err/);
    assert.equal(res.stoppedBy, null);
  });

  it('stops the process on timeout and on abort', async () => {
    const forever = node('setInterval(() => {}, 1000)');
    const timedOut = await runCommand(forever, { cwd: ws, timeoutMs: 300 });
    assert.equal(timedOut.stoppedBy, 'timeout');
    const ac = new AbortController();
    const running = runCommand(forever, { cwd: ws, timeoutMs: 60_000, signal: ac.signal });
    ac.abort();
    assert.equal((await running).stoppedBy, 'abort');
  });

  it('reports a manager that is not installed', async () => {
    const res = await runCommand({ file: 'maestro-no-such-package-manager', args: [], sandboxed: true }, { cwd: ws, timeoutMs: 5_000 });
    assert.notEqual(res.code, 0);
    assert.match(res.output, /No such file or directory/);
  });
});
