// The package installer without installing anything: strict names and versions, argv (never a
// shell), apt only as root, and the runner's timeout and abort on real (harmless) processes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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

describe('install commands', () => {
  it('npm and pip install into the workspace', () => {
    assert.deepEqual(installCommand({ manager: 'npm', name: 'is-number', version: '7.0.0' }, '/ws'), {
      file: 'npm',
      args: ['install', '--prefix', '/ws', '--no-audit', '--no-fund', 'is-number@7.0.0'],
    });
    const pip = installCommand({ manager: 'pip', name: 'six', version: '1.16.0' }, '/ws');
    assert.equal(pip.file, 'python3');
    assert.deepEqual(pip.args.slice(0, 3), ['-m', 'pip', 'install']);
    assert.deepEqual(pip.args.slice(-3), ['--target', '/ws/.packages/python', 'six==1.16.0']);
  });

  it('apt is refused for a non-root worker, before anything runs', async () => {
    assert.match(installRefusal('apt', 1000) ?? '', /only be installed where the worker runs as root/);
    assert.equal(installRefusal('npm', 1000), null);
    const { calls, run } = recorder();
    const res = await installPackage({ manager: 'apt', name: 'curl' }, { workspaceRoot: '/ws', uid: 1000, run });
    assert.equal(res.ok, false);
    assert.match(res.log, /runs as root/);
    assert.equal(calls.length, 0);
  });

  it('apt as root: apt-get install -y name=version, non-interactive', async () => {
    const { calls, run } = recorder();
    const res = await installPackage({ manager: 'apt', name: 'curl', version: '7.88.1-10' }, { workspaceRoot: '/ws', uid: 0, run });
    assert.equal(res.ok, true);
    assert.deepEqual(calls, [{ file: 'apt-get', args: ['install', '-y', 'curl=7.88.1-10'], env: { DEBIAN_FRONTEND: 'noninteractive' } }]);
  });

  it('an invalid name never reaches the runner; a failing install reports its exit code and log tail', async () => {
    const { calls, run } = recorder({ code: 1, output: `${'x'.repeat(10_000)}\nERROR: No matching distribution\n` });
    assert.equal((await installPackage({ manager: 'pip', name: 'a;b' }, { workspaceRoot: '/ws', run })).ok, false);
    assert.equal(calls.length, 0);
    const res = await installPackage({ manager: 'pip', name: 'nope' }, { workspaceRoot: '/ws', run });
    assert.equal(res.ok, false);
    assert.match(res.log, /No matching distribution\n\[exit code 1\]$/);
    assert.ok(res.log.length < 4200, 'only the tail of the log is kept');
    const good = await installPackage({ manager: 'pip', name: 'six' }, { workspaceRoot: '/ws', run: recorder().run });
    assert.match(good.usage ?? '', /PYTHONPATH=\.packages\/python/);
  });
});

describe('runCommand', () => {
  const node = (code: string): InstallCommand => ({ file: process.execPath, args: ['-e', code] });

  it('collects stdout and stderr and the exit code', async () => {
    const res = await runCommand(node('console.log("out"); console.error("err"); process.exit(3)'), { cwd: process.cwd(), timeoutMs: 10_000 });
    assert.equal(res.code, 3);
    assert.match(res.output, /out/);
    assert.match(res.output, /err/);
    assert.equal(res.stoppedBy, null);
  });

  it('stops the process on timeout and on abort', async () => {
    const forever = node('setInterval(() => {}, 1000)');
    const timedOut = await runCommand(forever, { cwd: process.cwd(), timeoutMs: 200 });
    assert.equal(timedOut.stoppedBy, 'timeout');
    const ac = new AbortController();
    const running = runCommand(forever, { cwd: process.cwd(), timeoutMs: 60_000, signal: ac.signal });
    ac.abort();
    assert.equal((await running).stoppedBy, 'abort');
  });

  it('reports a manager that is not installed', async () => {
    const res = await runCommand({ file: 'maestro-no-such-package-manager', args: [] }, { cwd: process.cwd(), timeoutMs: 5_000 });
    assert.match(res.spawnError ?? '', /ENOENT/);
  });
});
