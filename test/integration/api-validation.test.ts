// The API's answers to bad input, auth and its OpenAPI document, on a real database. Temporal is an
// unreachable lazy connection: validation must never need it, and a start that fails must say so.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../core/types.js';
import { createApiApp } from '../../api/app.js';
import { MAX_USER_COMMENTS_PER_JOB } from '../../api/job-actions.js';
import { InsecureListenError, startApiServer } from '../../api/server.js';
import { loadConfig } from '../../config/config.js';
import { createTestDatabase } from '../helpers/test-db.js';
import { temporalAddress } from '../helpers/test-stack.js';

const BAD_PIECE = `name: bad
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

const MISSING_JOB = '00000000-0000-4000-8000-000000000000';

interface ErrorJson {
  error: { code: string; message: string; issues?: Array<{ line: number | null; message: string }> };
}

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let client: Client;
let home: string;
let app: OpenAPIHono;
let securedApp: OpenAPIHono;

before(async () => {
  database = await createTestDatabase();
  home = await mkdtemp(path.join(os.tmpdir(), 'maestro-api-'));
  client = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: '1s' }) });
  const config = loadConfig({ MAESTRO_HOME: home });
  app = createApiApp({ db: database.db, client, config, temporalTimeoutMs: 1000 });
  securedApp = createApiApp({ db: database.db, client, config: loadConfig({ MAESTRO_HOME: home, MAESTRO_API_TOKEN: 's3cret' }) });
});

after(async () => {
  await client.connection.close().catch(() => {});
  await database.stop();
  await rm(home, { recursive: true, force: true });
});

function post(a: OpenAPIHono, url: string, body: unknown, headers: Record<string, string> = {}) {
  return a.request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function expectError(res: Response, status: number, code: string): Promise<ErrorJson['error']> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const json = JSON.parse(text) as ErrorJson;
  assert.equal(json.error.code, code, text);
  assert.equal(typeof json.error.message, 'string');
  assert.ok(!/\bat .*\.ts:\d+/.test(json.error.message), `a stack trace leaked: ${json.error.message}`);
  return json.error;
}

describe('POST /api/jobs validation', () => {
  it('answers malformed JSON with 400', async () => {
    const e = await expectError(await post(app, '/api/jobs', '{"instruction": "x",'), 400, 'invalid_request');
    assert.match(e.message, /JSON/);
  });

  it('names a missing instruction', async () => {
    const e = await expectError(await post(app, '/api/jobs', { piece: 'chat' }), 400, 'invalid_request');
    assert.match(e.message, /^instruction: /);
  });

  it('refuses an empty or oversized instruction, unknown keys, and both piece forms at once', async () => {
    await expectError(await post(app, '/api/jobs', { piece: 'chat', instruction: '' }), 400, 'invalid_request');
    await expectError(await post(app, '/api/jobs', { piece: 'chat', instruction: 'x'.repeat(100_001) }), 400, 'invalid_request');
    const typo = await expectError(await post(app, '/api/jobs', { piece: 'chat', instrution: 'x' }), 400, 'invalid_request');
    assert.match(typo.message, /instrution|instruction/);
    const both = await expectError(await post(app, '/api/jobs', { piece: 'chat', pieceYaml: BAD_PIECE, instruction: 'x' }), 400, 'invalid_request');
    assert.match(both.message, /exactly one of piece or pieceYaml/);
  });

  it('answers an unknown piece with 422 listing the built-ins', async () => {
    const e = await expectError(await post(app, '/api/jobs', { piece: 'no-such-piece', instruction: 'x' }), 422, 'unknown_piece');
    assert.match(e.message, /no-such-piece/);
    assert.match(e.message, /chat/);
  });

  it('answers a piece that does not lint with 422 and the issue lines', async () => {
    const e = await expectError(await post(app, '/api/jobs', { pieceYaml: BAD_PIECE, instruction: 'x' }), 422, 'invalid_piece');
    assert.match(e.message, /pieceYaml:9: movement "plan": .*implemnt/);
    assert.ok(e.issues?.some((i) => i.line === 9), JSON.stringify(e.issues));
  });

  it('marks the job failed with the reason when Temporal cannot start it', async () => {
    const res = await post(app, '/api/jobs', { piece: 'chat', instruction: 'say hello' });
    const e = await expectError(res, 503, 'workflow_start_failed');
    const id = /job ([0-9a-f-]{36})/.exec(e.message)?.[1];
    assert.ok(id, e.message);
    const job = (await (await app.request(`/api/jobs/${id}`)).json()) as { status: string; reason: string; movements: unknown[] };
    assert.equal(job.status, 'failed');
    assert.match(job.reason, /could not start the workflow/);
    assert.deepEqual(job.movements, []);
  });
});

describe('reading jobs', () => {
  it('lists jobs and rejects an unknown status filter', async () => {
    const res = await app.request('/api/jobs?status=failed,queued&limit=5');
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(((await res.json()) as { jobs: unknown[] }).jobs));
    const e = await expectError(await app.request('/api/jobs?status=running,bogus'), 400, 'invalid_request');
    assert.match(e.message, /bogus/);
    await expectError(await app.request('/api/jobs?limit=0'), 400, 'invalid_request');
  });

  it('answers an unknown job with 404 and a non-UUID id with 400', async () => {
    await expectError(await app.request(`/api/jobs/${MISSING_JOB}`), 404, 'not_found');
    await expectError(await app.request(`/api/jobs/${MISSING_JOB}/events`), 404, 'not_found');
    await expectError(await app.request(`/api/jobs/${MISSING_JOB}/comments`), 404, 'not_found');
    await expectError(await post(app, `/api/jobs/${MISSING_JOB}/comments`, { body: 'hi' }), 404, 'not_found');
    const e = await expectError(await app.request("/api/jobs/not-a-uuid'--"), 400, 'invalid_request');
    assert.match(e.message, /^id: /);
  });

  it('rejects an empty comment before looking at the job', async () => {
    const e = await expectError(await post(app, `/api/jobs/${MISSING_JOB}/comments`, { body: '' }), 400, 'invalid_request');
    assert.match(e.message, /^body: /);
  });

  it('answers an unknown route with a JSON 404', async () => {
    await expectError(await app.request('/api/nope'), 404, 'not_found');
  });
});

describe('pieces', () => {
  it('lists the built-ins with their movements', async () => {
    const { pieces } = (await (await app.request('/api/pieces')).json()) as { pieces: Array<{ name: string; movements: string[] }> };
    const develop = pieces.find((p) => p.name === 'develop');
    assert.ok(develop);
    assert.ok(develop.movements.includes('plan'));
    assert.ok(pieces.some((p) => p.name === 'chat'));
  });

  it('lints YAML text: issues with lines, or ok', async () => {
    const bad = (await (await post(app, '/api/pieces/lint', { yaml: BAD_PIECE, file: 'mine.yaml' })).json()) as {
      ok: boolean;
      issues: Array<{ file: string; line: number }>;
    };
    assert.equal(bad.ok, false);
    assert.ok(bad.issues.some((i) => i.file === 'mine.yaml' && i.line === 9), JSON.stringify(bad.issues));
    const good = BAD_PIECE.replace('implemnt', 'plan');
    const ok = (await (await post(app, '/api/pieces/lint', { yaml: good })).json()) as { ok: boolean; issues: unknown[] };
    assert.deepEqual(ok, { ok: true, issues: [] });
  });
});

describe('auth', () => {
  it('requires the bearer token on every route but health', async () => {
    assert.equal((await securedApp.request('/api/health')).status, 200);
    await expectError(await securedApp.request('/api/jobs'), 401, 'unauthorized');
    await expectError(await securedApp.request('/api/openapi.json'), 401, 'unauthorized');
    await expectError(await securedApp.request('/api/jobs', { headers: { authorization: 'Bearer wrong' } }), 401, 'unauthorized');
    await expectError(await post(securedApp, '/api/jobs', { piece: 'chat', instruction: 'x' }), 401, 'unauthorized');
    const ok = await securedApp.request('/api/jobs', { headers: { authorization: 'Bearer s3cret' } });
    assert.equal(ok.status, 200);
  });

  it('refuses to serve an app without a token on any address, loopback included', async () => {
    await assert.rejects(startApiServer(app, { host: '0.0.0.0', port: 0 }), InsecureListenError);
    await assert.rejects(startApiServer(app, { host: '127.0.0.1', port: 0 }), InsecureListenError);
    const server = await startApiServer(securedApp, { host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${server.url}/api/health`);
      assert.equal(res.status, 200);
    } finally {
      await server.stop();
    }
  });
});

describe('methods, workspaces, piece paths and limits', () => {
  it('answers a method a path does not have with 405, an Allow header and the JSON error', async () => {
    const res = await app.request('/api/jobs', { method: 'DELETE' });
    const e = await expectError(res, 405, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), 'GET, HEAD, POST');
    assert.match(e.message, /DELETE/);
    const one = await app.request(`/api/jobs/${MISSING_JOB}`, { method: 'PUT' });
    await expectError(one, 405, 'method_not_allowed');
    assert.equal(one.headers.get('allow'), 'GET, HEAD');
    assert.equal((await app.request('/api/health', { method: 'POST' })).status, 405);
    await expectError(await app.request('/api/nope', { method: 'DELETE' }), 404, 'not_found');
  });

  it('refuses a workspace outside the roots with 400 invalid_workspace and creates nothing', async () => {
    for (const workspace of ['/', '/etc', '/tmp/maestro-elsewhere', '../x', path.join(home, 'workspaces')]) {
      const e = await expectError(await post(app, '/api/jobs', { piece: 'chat', instruction: 'x', workspace }), 400, 'invalid_workspace');
      assert.match(e.message, /^workspace /);
    }
    // A NUL is refused with the whole body, before any field is looked at.
    const nul = await expectError(await post(app, '/api/jobs', { piece: 'chat', instruction: 'x', workspace: `${home}/workspaces/a\u0000b` }), 400, 'invalid_request');
    assert.match(nul.message, /NUL characters/);
    const jobs = (await (await app.request('/api/jobs?limit=500')).json()) as { jobs: Array<{ workspace: string }> };
    assert.ok(!jobs.jobs.some((j) => !j.workspace.startsWith(path.join(home, 'workspaces'))), 'no job row for a refused workspace');
    assert.ok(!(await readdir('/tmp')).includes('maestro-elsewhere'));
  });

  it('refuses a piece path outside the pieces dirs with 400 invalid_piece_path', async () => {
    for (const piece of ['/etc/passwd.yaml', '/tmp/some-piece.yaml', '../../etc/x.yaml']) {
      await expectError(await post(app, '/api/jobs', { piece, instruction: 'x' }), 400, 'invalid_piece_path');
    }
  });

  it('refuses hostile YAML with 422 yaml_limit_exceeded, on submit and on lint', async () => {
    const deep = await expectError(await post(app, '/api/jobs', { pieceYaml: '['.repeat(100_000), instruction: 'x' }), 422, 'yaml_limit_exceeded');
    assert.match(deep.message, /pieceYaml:1: .*nesting-depth limit/);
    const lint = await expectError(await post(app, '/api/pieces/lint', { yaml: `a: &x 1\nb: [${Array(60).fill('*x').join(', ')}]\n` }), 422, 'yaml_limit_exceeded');
    assert.match(lint.message, /alias limit/);
  });

  it('caps the issues a lint answers with', async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `bogus_${i}: 1`).join('\n');
    const res = (await (await post(app, '/api/pieces/lint', { yaml: keys })).json()) as { ok: boolean; issues: Array<{ message: string }> };
    assert.equal(res.ok, false);
    assert.equal(res.issues.length, 51);
    assert.match(res.issues[50].message, /more issue/);
  });

  it('caps the comments per job with 409 too_many_comments', async () => {
    const res = await post(app, '/api/jobs', { piece: 'chat', instruction: 'flood me' });
    const id = /job ([0-9a-f-]{36})/.exec((await expectError(res, 503, 'workflow_start_failed')).message)?.[1];
    assert.ok(id);
    const rows = Array.from({ length: MAX_USER_COMMENTS_PER_JOB }, (_, i) => ({ job_id: id, author: 'user', body: `c${i}` }));
    await database.db.insertInto('comments').values(rows).execute();
    const e = await expectError(await post(app, `/api/jobs/${id}/comments`, { body: 'one more' }), 409, 'too_many_comments');
    assert.match(e.message, /1000/);
    await expectError(await post(app, `/api/jobs/${id}/comments`, { body: 'x'.repeat(20_001) }), 400, 'invalid_request');
  });
});

describe('GET /api/openapi.json', () => {
  it('states the rules: bearer auth on every route but health, UUIDs, one of piece/pieceYaml, max lengths, 4xx', async () => {
    type Op = { security?: unknown[]; parameters?: Array<{ name: string; schema: { format?: string } }>; responses: Record<string, unknown> };
    const doc = (await (await app.request('/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, Op>>;
      components: { securitySchemes: Record<string, { type: string; scheme: string }>; schemas: Record<string, any> };
    };
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, { ...doc.components.securitySchemes.bearerAuth, type: 'http', scheme: 'bearer' });
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        if (p === '/api/health') assert.deepEqual(op.security, [], 'health is open');
        else {
          assert.deepEqual(op.security, [{ bearerAuth: [] }], `${m} ${p}`);
          for (const code of ['400', '401', '403', '421']) assert.ok(op.responses[code], `${m} ${p} documents ${code}`);
        }
        for (const param of op.parameters ?? []) if (param.name === 'id') assert.equal(param.schema.format, 'uuid', `${m} ${p}`);
      }
    }
    const submit = doc.components.schemas.SubmitJob;
    assert.deepEqual(submit.oneOf.map((o: { required: string[] }) => o.required), [['piece'], ['pieceYaml']]);
    assert.equal(submit.properties.instruction.maxLength, 100_000);
    assert.equal(submit.properties.pieceYaml.maxLength, 200_000);
    assert.equal(submit.properties.workspace.maxLength, 4096);
    assert.equal(submit.properties.parentId.format, 'uuid');
    assert.equal(doc.components.schemas.NewComment.properties.body.maxLength, 20_000);
    assert.ok(doc.paths['/api/pieces/lint'].post.responses['422']);
  });

  it('is an OpenAPI 3.1 document listing every route', async () => {
    const doc = (await (await app.request('/api/openapi.json')).json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    assert.equal(doc.openapi, '3.1.0');
    const routes = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    for (const r of [
      'POST /api/jobs',
      'GET /api/jobs',
      'GET /api/jobs/{id}',
      'POST /api/jobs/{id}/comments',
      'GET /api/jobs/{id}/comments',
      'GET /api/jobs/{id}/events',
      'GET /api/pieces',
      'POST /api/pieces/lint',
      'GET /api/health',
    ]) {
      assert.ok(routes.includes(r), `${r} missing from ${routes.join(', ')}`);
    }
  });
});

// Against the run's Temporal dev server, with no worker on the queue: the workflow starts and waits.
describe('with Temporal', () => {
  let connection: Connection;
  let live: Client;
  let liveApp: OpenAPIHono;
  before(async () => {
    connection = await Connection.connect({ address: temporalAddress() });
    live = new Client({ connection });
    const config = loadConfig({ MAESTRO_HOME: home, MAESTRO_TASK_QUEUE: `api-test-${Date.now()}` });
    liveApp = createApiApp({ db: database.db, client: live, config });
  });
  after(async () => {
    await connection.close();
  });

  it('starts jobWorkflow with the search attributes, then delivers replies as signals', async () => {
    const res = await post(liveApp, '/api/jobs', { piece: 'chat', instruction: 'say hello' });
    assert.equal(res.status, 201, await res.clone().text());
    const job = (await res.json()) as { id: string; status: string; workflowId: string; workspace: string };
    assert.equal(job.status, 'queued');
    assert.equal(job.workflowId, `job-${job.id}`);
    assert.equal(job.workspace, path.join(home, 'workspaces', job.id));

    const handle = live.workflow.getHandle(job.workflowId);
    const described = await handle.describe();
    assert.equal(described.type, 'jobWorkflow');
    assert.equal(described.status.name, 'RUNNING');
    const attrs = described.searchAttributes as Record<string, unknown[]>;
    assert.deepEqual(attrs[SEARCH_ATTRIBUTES.status], ['queued']);
    assert.deepEqual(attrs[SEARCH_ATTRIBUTES.piece], ['chat']);

    const posted = await post(liveApp, `/api/jobs/${job.id}/comments`, { body: 'more detail please' });
    assert.equal(posted.status, 201);
    const comment = (await posted.json()) as { id: number; body: string; signalled: boolean };
    assert.equal(comment.signalled, true);
    const history = await handle.fetchHistory();
    const signal = history.events?.find((e) => e.workflowExecutionSignaledEventAttributes)?.workflowExecutionSignaledEventAttributes;
    assert.equal(signal?.signalName, 'reply');
    const payload = signal?.input?.payloads?.[0]?.data;
    assert.ok(payload);
    assert.deepEqual(JSON.parse(Buffer.from(payload).toString('utf8')), { commentId: comment.id });

    // A workflow that is gone does not make a reply fail: the comment is still stored.
    await handle.terminate('test cleanup');
    await assert.rejects(handle.signal('reply', { commentId: 0 }), WorkflowNotFoundError);
    const late = await post(liveApp, `/api/jobs/${job.id}/comments`, { body: 'too late' });
    assert.equal(late.status, 201);
    assert.equal(((await late.json()) as { signalled: boolean }).signalled, false);
    const { comments } = (await (await liveApp.request(`/api/jobs/${job.id}/comments`)).json()) as { comments: Array<{ body: string }> };
    assert.deepEqual(comments.map((c) => c.body), ['more detail please', 'too late']);
  });
});
