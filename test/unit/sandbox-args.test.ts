// What a sandbox sees, line by line: the bubblewrap command line, the resource limits and the
// allowlisted environment, and what a piece may declare for them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildBwrapArgs, withLimits, type HostEntry } from '../../engine/sandbox/bwrap-args.js';
import { buildSandboxEnv } from '../../engine/sandbox/sandbox-env.js';
import { parsePiece } from '../../engine/piece/piece-loader.js';

const LAYOUT: Record<string, HostEntry> = {
  '/usr': { kind: 'dir' },
  '/etc': { kind: 'dir' },
  '/bin': { kind: 'symlink', target: 'usr/bin' },
  '/lib': { kind: 'symlink', target: 'usr/lib' },
};
const debianLayout = (p: string): HostEntry => LAYOUT[p] ?? { kind: 'absent' };

function pairs(args: string[], flag: string): string[][] {
  const out: string[][] = [];
  args.forEach((a, i) => {
    if (a === flag) out.push(args.slice(i + 1, i + 3));
  });
  return out;
}

describe('bubblewrap command line', () => {
  const args = buildBwrapArgs(
    { workspace: '/srv/ws/job', cwd: '/srv/ws/job', readOnlyWorkspace: false, env: { PATH: '/usr/bin', HOME: '/srv/ws/job' }, argv: ['bash', '-c', 'id'], handshake: false },
    debianLayout,
  );

  it('unshares every namespace, drops every capability and dies with the worker', () => {
    for (const flag of ['--unshare-all', '--unshare-user', '--die-with-parent', '--new-session', '--clearenv']) assert.ok(args.includes(flag), flag);
    assert.deepEqual(pairs(args, '--cap-drop'), [['ALL', '--die-with-parent']]);
    assert.ok(!args.includes('--share-net'));
  });

  it('shows the system read-only, the workspace read-write, and nothing else of the host', () => {
    assert.deepEqual(pairs(args, '--ro-bind').map((p) => p[0]), ['/usr', '/etc']);
    assert.deepEqual(pairs(args, '--bind'), [['/srv/ws/job', '/srv/ws/job']]);
    assert.deepEqual(pairs(args, '--symlink'), [['usr/bin', '/bin'], ['usr/lib', '/lib']]);
    assert.deepEqual(pairs(args, '--tmpfs').map((p) => p[0]), ['/tmp', '/run', '/var']);
    for (const hidden of ['/home', '/root', '/opt', '/srv', '/work', '/mnt']) {
      assert.ok(!pairs(args, '--ro-bind').some((p) => p[0] === hidden), hidden);
    }
    assert.deepEqual(args.slice(args.indexOf('--') + 1), ['bash', '-c', 'id']);
  });

  it('read-only workspaces, binds by descriptor and the start handshake', () => {
    const ro = buildBwrapArgs(
      { workspace: '/w', workspaceFd: 5, cwd: '/w', readOnlyWorkspace: true, env: {}, argv: ['git', 'status'], handshake: true },
      debianLayout,
    );
    assert.deepEqual(pairs(ro, '--ro-bind-fd'), [['5', '/w']]);
    assert.ok(!pairs(ro, '--ro-bind').some((p) => p[1] === '/w'), 'never by path when a descriptor is given');
    assert.deepEqual(pairs(ro, '--info-fd')[0][0], '3');
    assert.deepEqual(pairs(ro, '--block-fd')[0][0], '4');
  });

  it('wraps the command in hard limits it cannot raise', () => {
    const argv = withLimits(['bash'], { cpuSeconds: 10, memoryBytes: 1024, processes: 5, fileBytes: 2048, openFiles: 64 });
    assert.deepEqual(argv, ['prlimit', '--cpu=10:11', '--as=1024', '--nproc=5', '--fsize=2048', '--nofile=64', '--core=0', '--', 'bash']);
  });
});

describe('sandbox environment', () => {
  const worker = { MAESTRO_LLM_API_KEY: 'sk-x', DATABASE_URL: 'postgres://a:b@h/d', HTTP_PROXY: 'http://proxy', LANG: 'de_DE.UTF-8', SECRET: 'y' };

  it('is an allowlist: nothing of the worker\'s own environment', () => {
    const env = buildSandboxEnv({ home: '/w', workerEnv: worker });
    assert.deepEqual(Object.keys(env).sort(), ['HOME', 'LANG', 'PATH', 'TERM', 'TMPDIR']);
    assert.equal(env.HOME, '/w');
    assert.equal(env.LANG, 'de_DE.UTF-8');
  });

  it('passes through what the operator names, never Maestro\'s own variables', () => {
    const env = buildSandboxEnv({ home: '/w', workerEnv: worker, passThrough: ['HTTP_PROXY', 'MAESTRO_LLM_API_KEY', 'DATABASE_URL'] });
    assert.equal(env.HTTP_PROXY, 'http://proxy');
    assert.equal(env.MAESTRO_LLM_API_KEY, undefined);
    assert.equal(env.DATABASE_URL, undefined);
  });

  it('refuses reserved names a piece declares', () => {
    assert.throws(() => buildSandboxEnv({ home: '/w', extra: { MAESTRO_API_TOKEN: 'x' } }), /reserved/);
    assert.equal(buildSandboxEnv({ home: '/w', extra: { NODE_ENV: 'test' } }).NODE_ENV, 'test');
  });
});

describe('piece fields for the sandbox', () => {
  const piece = (extra: string) => `name: p
initial_movement: a
system_prompt: s
${extra}
movements:
  - name: a
    instruction: do it
    network: true
    env:
      NODE_ENV: test
`;

  it('network and env parse onto the movement and the piece', () => {
    const p = parsePiece(piece('env:\n  LANG: C.UTF-8'), 'p.yaml');
    assert.equal(p.movements[0].network, true);
    assert.deepEqual(p.movements[0].env, { NODE_ENV: 'test' });
    assert.deepEqual(p.env, { LANG: 'C.UTF-8' });
  });

  it('a reserved variable is refused with its line', () => {
    assert.throws(() => parsePiece(piece('env:\n  DATABASE_URL: postgres://x'), 'p.yaml'), /p\.yaml:5: "DATABASE_URL" is reserved for the worker/);
  });
});
