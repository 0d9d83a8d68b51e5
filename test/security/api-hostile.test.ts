// A hostile caller against the real `maestro api` in a child process (so a crash or a hang shows):
// no token, foreign Host and Origin, wrong methods, YAML bombs, oversized bodies, workspaces and
// piece paths outside what the operator configured. Every answer is a 4xx JSON error, nothing is
// created, and the process still answers /api/health afterwards.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { getFreePort } from '../../infra/ports.js';
import { runMaestro } from '../helpers/api-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.js';
import { temporalAddress } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const GOOD_PIECE = `name: fine
initial_movement: work
system_prompt: You are a test agent.
movements:
  - name: work
    instruction: Do it.
    default_next: COMPLETE
`;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

let database: TestDatabase;
let child: ChildProcess;
let childOutput = '';
let home: string;
let outside: string;
let port: number;
let token: string;

/** A raw HTTP request: node's http lets a test send any Host header, which fetch does not. */
function send(method: string, pathname: string, opts: { headers?: Record<string, string>; body?: string | Buffer; auth?: boolean } = {}): Promise<Answer> {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...opts.headers };
  if (opts.auth !== false) headers.authorization ??= `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // left as text: the assertion below shows it
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        if (!req.writableEnded) req.destroy();
      });
    });
    // A server that refuses a big body answers early and closes while the rest is still being sent.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${pathname}: no answer in 20 s`)));
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    if (body && body.length > 1024 * 1024) {
      // Announce the whole length but send only the start: the server must refuse on the header alone.
      req.setHeader('content-length', String(body.length));
      req.write(body.subarray(0, 64 * 1024));
    } else {
      req.end(body);
    }
  });
}

const postJson = (pathname: string, body: unknown, headers: Record<string, string> = {}) =>
  send('POST', pathname, { body: JSON.stringify(body), headers });

function expectError(a: Answer, status: number, code: string): { code: string; message: string } {
  const shown = JSON.stringify(a.body).slice(0, 400);
  assert.equal(a.status, status, shown);
  assert.match(String(a.headers['content-type']), /application\/json/, shown);
  assert.equal(a.body?.error?.code, code, shown);
  assert.equal(typeof a.body.error.message, 'string');
  return a.body.error;
}

async function stillHealthy(): Promise<void> {
  assert.equal(child.exitCode, null, `the API process died:\n${childOutput}`);
  const h = await send('GET', '/api/health', { auth: false });
  assert.equal(h.status, 200, JSON.stringify(h.body));
  assert.equal(h.body.ok, true);
}

before(async () => {
  database = await createTestDatabase();
  home = await mkdtemp(path.join(os.tmpdir(), 'maestro-hostile-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'maestro-hostile-outside-'));
  await mkdir(path.join(home, 'workspaces'), { recursive: true });
  await symlink(outside, path.join(home, 'workspaces', 'escape'));
  await writeFile(path.join(outside, 'piece.yaml'), GOOD_PIECE);
  port = await getFreePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: os.tmpdir(),
    MAESTRO_HOME: home,
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: temporalAddress(),
    MAESTRO_TASK_QUEUE: `hostile-${process.pid}`,
    MAESTRO_API_PORT: String(port),
  };
  child = spawn(process.execPath, [path.join(root, 'bin', 'maestro.js'), 'api'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (childOutput += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (childOutput += d.toString()));
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`maestro api exited ${child.exitCode}:\n${childOutput}`);
      return (await send('GET', '/api/health', { auth: false })).status === 200;
    },
    { timeoutMs: 60_000, intervalMs: 200, message: `maestro api answering on ${port}` },
  );
  token = (await readFile(path.join(home, 'api-token'), 'utf8')).trim();
});

after(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await database?.stop();
  await rm(home, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

describe('maestro api against a hostile caller', () => {
  it('generated its token file (0600, private home) and the local CLI uses it untold', async () => {
    assert.ok(token.length >= 32);
    assert.equal((await stat(path.join(home, 'api-token'))).mode & 0o777, 0o600);
    assert.equal((await stat(home)).mode & 0o077, 0);
    assert.match(childOutput, /API token: +\S*api-token \(new\)/);
    const cli = await runMaestro(['jobs', '--json'], { MAESTRO_HOME: home, MAESTRO_API_URL: `http://127.0.0.1:${port}` });
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(JSON.parse(cli.stdout), []);
  });

  it('answers a missing or wrong token with 401', async () => {
    expectError(await send('GET', '/api/jobs', { auth: false }), 401, 'unauthorized');
    expectError(await send('GET', '/api/jobs', { headers: { authorization: 'Bearer wrong' } }), 401, 'unauthorized');
    expectError(await send('GET', '/api/jobs', { headers: { authorization: `Basic ${token}` } }), 401, 'unauthorized');
    expectError(await send('POST', '/api/jobs', { auth: false, body: JSON.stringify({ piece: 'chat', instruction: 'x' }) }), 401, 'unauthorized');
    await stillHealthy();
  });

  it('refuses a foreign Host (DNS rebinding) with 421, health included', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `localhost.evil.example:${port}`, `127.0.0.1:${port + 1}`]) {
      expectError(await send('GET', '/api/jobs', { headers: { host } }), 421, 'misdirected_request');
      expectError(await send('GET', '/api/health', { headers: { host }, auth: false }), 421, 'misdirected_request');
    }
    assert.equal((await send('GET', '/api/health', { headers: { host: `localhost:${port}` }, auth: false })).status, 200);
    await stillHealthy();
  });

  it('refuses a foreign Origin with 403, even with the right token', async () => {
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${port + 1}`]) {
      expectError(await postJson('/api/jobs', { piece: 'chat', instruction: 'x' }, { origin }), 403, 'forbidden_origin');
      expectError(await send('GET', '/api/jobs', { headers: { origin } }), 403, 'forbidden_origin');
    }
    assert.equal((await send('GET', '/api/jobs', { headers: { origin: `http://127.0.0.1:${port}` } })).status, 200);
    await stillHealthy();
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const a = await send('DELETE', '/api/jobs');
    expectError(a, 405, 'method_not_allowed');
    assert.equal(a.headers.allow, 'GET, HEAD, POST');
    expectError(await send('PUT', '/api/pieces/lint', { body: '{}' }), 405, 'method_not_allowed');
    expectError(await send('PATCH', '/api/jobs/00000000-0000-4000-8000-000000000000'), 405, 'method_not_allowed');
    await stillHealthy();
  });

  it('refuses deep nesting and alias bombs before parsing, on submit and lint', async () => {
    const laughs = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
    for (let i = 1; i < 9; i++) laughs.push(`l${i}: &l${i} [${Array(9).fill(`*l${i - 1}`).join(', ')}]`);
    const small = ['s0: &s0 [a, b, c, d, e]'];
    for (let i = 1; i < 5; i++) small.push(`s${i}: &s${i} [${Array(5).fill(`*s${i - 1}`).join(', ')}]`);
    const hostile: Array<[string, RegExp]> = [
      ['['.repeat(100_000), /nesting-depth limit/],
      ['{a: '.repeat(20_000), /nesting-depth limit/],
      [Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}- `).join('\n'), /nesting-depth limit/],
      [laughs.join('\n'), /alias limit/],
      [small.join('\n'), /alias-expansion limit/],
    ];
    for (const [yaml, why] of hostile) {
      const t0 = Date.now();
      const e = expectError(await postJson('/api/jobs', { pieceYaml: yaml, instruction: 'x' }), 422, 'yaml_limit_exceeded');
      assert.match(e.message, why);
      assert.match(e.message, /^pieceYaml:\d+: /, 'names the line');
      expectError(await postJson('/api/pieces/lint', { yaml }), 422, 'yaml_limit_exceeded');
      assert.ok(Date.now() - t0 < 10_000, 'answered promptly');
    }
    await stillHealthy();
  });

  it('refuses NUL characters and syntax-error floods quickly, creating nothing', async () => {
    const before = await readdir(path.join(home, 'workspaces'));
    for (const body of [{ piece: 'chat', instruction: 'a\u0000b' }, { pieceYaml: 'name: p\u0000', instruction: 'x' }]) {
      expectError(await postJson('/api/jobs', body), 400, 'invalid_request');
    }
    // A NUL written as a YAML escape only appears once parsed: refused with its line.
    const escaped = 'name: p\ninitial_movement: a\nsystem_prompt: "s\\0"\nmovements:\n  - name: a\n    instruction: i\n';
    const e = expectError(await postJson('/api/jobs', { pieceYaml: escaped, instruction: 'x' }), 422, 'invalid_piece');
    assert.match(e.message, /pieceYaml:3: .*NUL character/);
    for (const yaml of ['a: b\n' + ']'.repeat(150_000), 'a: b\n' + ']'.repeat(4_000), `a: "${'\\x'.repeat(60_000)}"`]) {
      const t0 = Date.now();
      const res = await postJson('/api/pieces/lint', { yaml });
      assert.ok(res.status === 200 || res.status === 422, `lint answered ${res.status}`);
      assert.ok(Date.now() - t0 < 2_000, `answered in ${Date.now() - t0} ms`);
    }
    assert.deepEqual(await readdir(path.join(home, 'workspaces')), before);
    await stillHealthy();
  });

  it('refuses oversized bodies and fields', async () => {
    const huge = Buffer.alloc(3 * 1024 * 1024, 'a');
    expectError(await send('POST', '/api/jobs', { body: Buffer.concat([Buffer.from('{"instruction":"'), huge, Buffer.from('"}')]) }), 413, 'payload_too_large');
    expectError(await postJson('/api/jobs', { pieceYaml: 'a'.repeat(200_001), instruction: 'x' }), 400, 'invalid_request');
    expectError(await postJson('/api/jobs', { piece: 'chat', instruction: 'x'.repeat(100_001) }), 400, 'invalid_request');
    expectError(await postJson('/api/pieces/lint', { yaml: 'a: 1', file: 'f'.repeat(300) }), 400, 'invalid_request');
    expectError(await send('GET', `/api/jobs?status=${'running,'.repeat(100)}`), 400, 'invalid_request');
    await stillHealthy();
  });

  it('refuses workspaces outside the roots with 400 invalid_workspace and creates nothing', async () => {
    const before = await readdir(path.join(home, 'workspaces'));
    for (const workspace of ['/', '/etc', '/etc/maestro-hostile', '../elsewhere', `${home}/workspaces/../x`, path.join(home, 'workspaces'), path.join(home, 'workspaces', 'escape', 'job'), `${home}/workspaces/a\u0000b`, `${home}/workspaces/${'x'.repeat(5000)}`]) {
      const res = await postJson('/api/jobs', { piece: 'chat', instruction: 'x', workspace });
      // The overlong one is refused by the schema and the NUL by the body check (400 invalid_request)
      // before the roots are asked.
      expectError(res, 400, workspace.length > 4096 || workspace.includes('\u0000') ? 'invalid_request' : 'invalid_workspace');
    }
    assert.deepEqual(await readdir(path.join(home, 'workspaces')), before);
    assert.deepEqual((await readdir(outside)).sort(), ['piece.yaml'], 'nothing was created through the symlink');
    await stillHealthy();
  });

  it('refuses piece paths outside the pieces dirs with 400 invalid_piece_path, existing or not', async () => {
    for (const piece of ['/etc/passwd.yaml', path.join(outside, 'piece.yaml'), path.join(os.tmpdir(), 'no-such-piece.yaml'), '../../../etc/x.yml']) {
      const e = expectError(await postJson('/api/jobs', { piece, instruction: 'x' }), 400, 'invalid_piece_path');
      assert.ok(!e.message.includes('lol') && !e.message.includes('root:'), e.message);
    }
    expectError(await postJson('/api/jobs', { piece: '/etc/passwd', instruction: 'x' }), 400, 'invalid_request');
    await stillHealthy();
  });

  it('created no job for any of it, and still answers', async () => {
    const jobs = await send('GET', '/api/jobs?limit=500');
    assert.equal(jobs.status, 200);
    assert.deepEqual(jobs.body.jobs, []);
    await stillHealthy();
  });
});
