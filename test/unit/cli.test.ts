// The `maestro` CLI as a user runs it: spawned through bin/maestro.js. `pieces lint` is local; the
// client commands are pointed at a small in-test HTTP server that answers like the API.
import assert from 'node:assert/strict';
import { runMaestro } from '../helpers/api-cli.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

const maestro = runMaestro;

const GOOD = `name: good
initial_movement: work
max_movements: 3
system_prompt: You are a test agent.
movements:
  - name: work
    instruction: Do the work.
    allowed_tools: [Read]
    rules: []
    default_next: COMPLETE
`;

// Line 9 names a movement that does not exist.
const BAD = `name: bad
initial_movement: plan
system_prompt: You are a test agent.
movements:
  - name: plan
    instruction: Plan it.
    rules:
      - condition: the plan is ready
        next: implemnt
    default_next: COMPLETE
`;

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-cli-'));
  await writeFile(path.join(dir, 'good.yaml'), GOOD);
  await writeFile(path.join(dir, 'bad.yaml'), BAD);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('maestro pieces lint', () => {
  it('prints ok and exits 0 for a clean piece', async () => {
    const r = await maestro(['pieces', 'lint', path.join(dir, 'good.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /good\.yaml: ok/);
  });

  it('prints each issue with its line and exits 1', async () => {
    const r = await maestro(['pieces', 'lint', path.join(dir, 'good.yaml'), path.join(dir, 'bad.yaml')]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /good\.yaml: ok/);
    assert.match(r.stdout, /bad\.yaml:9: movement "plan": .*implemnt/);
  });

  it('reports a missing file and exits 1', async () => {
    const r = await maestro(['pieces', 'lint', path.join(dir, 'nope.yaml')]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /nope\.yaml: file not found/);
  });

  it('lints the built-in pieces clean', async () => {
    const r = await maestro(['pieces', 'lint', path.join(root, 'pieces', 'chat.yaml'), path.join(root, 'pieces', 'develop.yaml'), '--json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout) as Array<{ ok: boolean }>;
    assert.deepEqual(out.map((o) => o.ok), [true, true]);
  });
});

describe('maestro usage and connection errors', () => {
  it('exits 2 on bad usage', async () => {
    assert.equal((await maestro(['show'])).code, 2);
    assert.equal((await maestro(['no-such-command'])).code, 2);
    const r = await maestro(['jobs', '--limit', 'lots']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--limit must be an integer/);
  });

  it('says where it expected the API when nothing listens there', async () => {
    // A port that was free a moment ago: bind, read it, close.
    const s = createServer();
    await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
    const port = (s.address() as AddressInfo).port;
    await new Promise<void>((res) => s.close(() => res()));
    const url = `http://127.0.0.1:${port}`;
    const r = await maestro(['jobs'], { MAESTRO_API_URL: url });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(r.stderr.includes(`is \`maestro dev\` (or \`maestro api\`) running at ${url}?`), r.stderr);
  });
});

// ---- a fake API that plays one job through two movements ----

const JOB_ID = '3f2b8c1e-6a4d-4e3b-9a51-0c7d2e9f8a10';
const EVENTS = [
  { type: 'job.submitted', data: { piece: 'develop' } },
  { type: 'movement.started', data: { movement: 'plan', sequence: 1 } },
  { type: 'movement.finished', data: { movement: 'plan', sequence: 1, next: 'implement', summary: 'planned the work' } },
  { type: 'movement.started', data: { movement: 'implement', sequence: 2 } },
  { type: 'movement.finished', data: { movement: 'implement', sequence: 2, next: 'COMPLETE', summary: 'wrote output/summary.md' } },
].map((e, i) => ({ id: i + 1, jobId: JOB_ID, movementRunId: null, createdAt: new Date(0).toISOString(), ...e }));

function jobView(status: string) {
  const t = new Date().toISOString();
  return {
    id: JOB_ID, parentId: null, piece: 'develop', instruction: 'write a summary', workspace: '/tmp/ws', status,
    currentMovement: null, waitReason: null, resumeMovement: null, reason: status === 'failed' ? 'boom' : null,
    summary: status === 'completed' ? 'all done' : null, workflowId: `job-${JOB_ID}`, movementCount: 2,
    createdAt: t, updatedAt: t, finishedAt: null,
  };
}

interface FakeApi {
  url: string;
  finalStatus: string;
  jobPolls: number;
  requests: Array<{ method: string; url: string; auth: string | undefined; body: unknown }>;
  server: Server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

async function startFakeApi(): Promise<FakeApi> {
  const api = { finalStatus: 'completed', jobPolls: 0, requests: [] } as unknown as FakeApi;
  api.server = createServer(async (req, res) => {
    const body = await readBody(req);
    api.requests.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
    const u = new URL(req.url!, 'http://x');
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'POST' && u.pathname === '/api/jobs') return send(201, jobView('queued'));
    if (u.pathname === `/api/jobs/${JOB_ID}/events`) {
      // Events appear a few at a time, as a running job writes them.
      const afterId = Number(u.searchParams.get('after') ?? 0);
      const visible = EVENTS.slice(0, Math.min(EVENTS.length, 2 + api.jobPolls * 2));
      return send(200, { events: visible.filter((e) => e.id > afterId) });
    }
    if (u.pathname === `/api/jobs/${JOB_ID}`) {
      api.jobPolls++;
      const status = api.jobPolls >= 3 ? api.finalStatus : api.jobPolls === 2 ? 'waiting_human' : 'running';
      return send(200, { ...jobView(status), movements: [] });
    }
    if (u.pathname === `/api/jobs/${JOB_ID}/comments`) {
      return send(200, { comments: [{ id: 1, jobId: JOB_ID, author: 'agent', body: 'which file?', createdAt: new Date(0).toISOString() }] });
    }
    send(404, { error: { code: 'not_found', message: `no route ${req.method} ${u.pathname}` } });
  });
  await new Promise<void>((res) => api.server.listen(0, '127.0.0.1', res));
  api.url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  return api;
}

describe('maestro client commands against an API', () => {
  let api: FakeApi;
  const env = () => ({ MAESTRO_API_URL: api.url, MAESTRO_API_TOKEN: 'sekret' });
  before(async () => {
    api = await startFakeApi();
  });
  after(async () => {
    api.server.closeAllConnections();
    await new Promise<void>((res) => api.server.close(() => res()));
  });

  it('run prints only the job id without --follow, sending a piece file as YAML and the token', async () => {
    api.requests.length = 0;
    const r = await maestro(['run', '--piece', path.join(dir, 'good.yaml'), '--workspace', 'rel/ws', 'write', 'a summary'], env());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${JOB_ID}\n`);
    const post = api.requests.find((q) => q.method === 'POST');
    assert.ok(post);
    assert.equal(post.auth, 'Bearer sekret');
    const body = post.body as Record<string, unknown>;
    assert.equal(body.instruction, 'write a summary');
    assert.equal(body.pieceYaml, GOOD);
    assert.equal(body.piece, undefined);
    assert.equal(body.workspace, path.join(root, 'rel/ws'));
  });

  it('run --follow prints each movement as it starts and ends, the question when parked, then the job; exit 0 when completed', async () => {
    api.finalStatus = 'completed';
    api.jobPolls = 0;
    const r = await maestro(['run', '--piece', 'develop', '--follow', '--poll-ms', '20', 'write a summary'], { ...env(), MAESTRO_API_TOKEN: '' });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines, [
      `job ${JOB_ID} queued (piece develop)`,
      '> #1 plan started',
      '< #1 plan finished -> implement: planned the work',
      '> #2 implement started',
      '? which file?',
      '< #2 implement finished -> COMPLETE: wrote output/summary.md',
      `job ${JOB_ID} completed: all done`,
    ]);
  });

  it('run --follow --json ends with the job as JSON and exits 1 when the job did not complete', async () => {
    api.finalStatus = 'failed';
    api.jobPolls = 0;
    const r = await maestro(['run', '--piece', 'develop', '--follow', '--json', '--poll-ms', '20', 'write a summary'], env());
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.filter((l) => String(l.type).startsWith('movement.')).length, 4);
    const last = lines.at(-1)!;
    assert.equal(last.id, JOB_ID);
    assert.equal(last.status, 'failed');
  });

  it('show --json combines the job, its movements and its comments', async () => {
    const r = await maestro(['show', JOB_ID, '--json'], env());
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { id: string; movements: unknown[]; comments: Array<{ body: string }> };
    assert.equal(out.id, JOB_ID);
    assert.deepEqual(out.movements, []);
    assert.equal(out.comments[0]!.body, 'which file?');
  });

  it('turns an API error into one line on stderr and exit 1', async () => {
    const r = await maestro(['show', '00000000-0000-4000-8000-000000000000'], env());
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^maestro: no route GET .* \(404 not_found\)\n$/);
  });
});
