// Approvals end to end on the real dev server: RequestTool / RequestPackage park the job on a
// request, a decision through the HTTP API (stored, then signalled) resumes the movement, and the
// re-run's identical call short-circuits (iron rule 4): approved -> no second request, declined ->
// told so, no second park. Expiry (approval_timeout) and the 409 on a second decision too.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApiApp } from '../../api/app.js';
import { MaestroStatus, MaestroWaitReason } from '../../core/search-attributes.js';
import type { JobView, RequestView } from '../../core/types.js';
import { getJob, listEvents, listRequests } from '../../db/repositories/index.js';
import type { RecordedRequest, ScriptedResponse, ScriptHandler } from '../../dev/scripted-llm-server.js';
import { runCli, startTestApi } from '../helpers/api-cli.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';
import { waitFor } from '../helpers/wait-for.js';

const run = promisify(execFile);

function pieceYaml(name: string, extra = ''): string {
  return `
name: approvals-${name}
initial_movement: work
max_movements: 10
${extra}
system_prompt: You test approvals.
movements:
  - name: work
    instruction: Do the work.
    allowed_tools: [Read]
    rules: []
    default_next: COMPLETE
`;
}

const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({ toolCalls: [{ name, arguments: args }] });
const done = (summary: string) => call('complete', { status: 'done', summary });

function firstUserMessage(req: RecordedRequest): string {
  const messages = (req.body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  return String(messages.find((m) => m.role === 'user')?.content ?? '');
}
const turnOf = (req: RecordedRequest) => (req.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
/** The tool results the model had seen when it sent this request. */
const toolResultsOf = (req: RecordedRequest) =>
  (req.body.messages as Array<{ role: string; content?: unknown }>).filter((m) => m.role === 'tool').map((m) => String(m.content));

/**
 * A local package index (PEP 503 layout, index.html per project) holding one wheel: the worker is
 * configured with it as its pip index (MAESTRO_PIP_INDEX_URL=file://...), so the test runs offline.
 */
async function buildTinyIndex(root: string): Promise<void> {
  const dir = path.join(root, 'maestro-tiny');
  await mkdir(dir, { recursive: true });
  await buildTinyWheel(dir);
  await writeFile(path.join(dir, 'index.html'), '<a href="maestro_tiny-1.0.0-py3-none-any.whl">maestro_tiny-1.0.0-py3-none-any.whl</a>\n');
}

async function buildTinyWheel(dir: string): Promise<void> {
  const script = `
import sys, zipfile
files = {
  'maestro_tiny/__init__.py': 'VALUE = 42\\n',
  'maestro_tiny-1.0.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: maestro-tiny\\nVersion: 1.0.0\\n',
  'maestro_tiny-1.0.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: maestro-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
}
with zipfile.ZipFile(sys.argv[1] + '/maestro_tiny-1.0.0-py3-none-any.whl', 'w') as z:
    for k, v in files.items():
        z.writestr(k, v)
    z.writestr('maestro_tiny-1.0.0.dist-info/RECORD', ''.join(k + ',,\\n' for k in files) + 'maestro_tiny-1.0.0.dist-info/RECORD,,\\n')
`;
  await writeFile(path.join(dir, 'make-wheel.py'), script);
  await run('python3', [path.join(dir, 'make-wheel.py'), dir]);
}

describe('approvals: RequestTool and RequestPackage', () => {
  let stack: TestStack;
  let app: OpenAPIHono;
  let wheels: string;
  // One stack for the file; each job's instruction carries a tag that picks its script.
  const scenarios = new Map<string, ScriptHandler>();
  const requestsOf = (tag: string) => stack.llm.requests.filter((r) => firstUserMessage(r).includes(`[${tag}]`));

  before(async () => {
    wheels = await mkdtemp(path.join(os.tmpdir(), 'maestro-wheels-'));
    await buildTinyIndex(wheels);
    stack = await startTestStack({
      env: { MAESTRO_PIP_INDEX_URL: `file://${wheels}/` },
      script: (req, i) => {
        const tag = /\[(\w+)\]/.exec(firstUserMessage(req))?.[1] ?? '';
        const handler = scenarios.get(tag);
        return handler ? handler(req, i) : { content: `no scenario "${tag}"` };
      },
    });
    app = createApiApp({ db: stack.db, client: stack.client, config: stack.config });
  });
  after(async () => {
    await stack?.stop();
    await rm(wheels, { recursive: true, force: true });
  });

  async function api<T>(method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await app.request(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  }
  const getJobWithRequests = async (id: string) => (await api<JobView & { requests: RequestView[] }>('GET', `/api/jobs/${id}`)).body;
  const waitParked = (id: string) =>
    waitFor(async () => {
      const job = await getJob(stack.db, id);
      return job?.status === 'waiting_human' ? job : undefined;
    }, { timeoutMs: 30_000, message: `job ${id} parks` });
  const parkCount = async (id: string) =>
    (await listEvents(stack.db, id)).filter((e) => e.type === 'job.status' && e.data.status === 'waiting_human').length;
  const steps = (list: ScriptedResponse[]): ScriptHandler => (req) => list[Math.min(turnOf(req), list.length - 1)];

  test('RequestTool parks tool_request; approved, the re-run short-circuits and may call the tool', async () => {
    const requestWrite = call('RequestTool', { tool: 'Write', reason: 'save the result to output/' });
    scenarios.set('approve', steps([requestWrite, call('Write', { path: 'output/ok.txt', content: 'approved\n' }), done('wrote it')]));
    const job = await stack.submit({ pieceYaml: pieceYaml('approve'), instruction: '[approve] write a file' });

    const parked = await waitParked(job.id);
    assert.equal(parked.waitReason, 'tool_request');
    assert.equal(parked.resumeMovement, 'work');
    const handle = stack.client.workflow.getHandle(job.workflowId);
    await waitFor(async () => (await handle.describe()).typedSearchAttributes.get(MaestroWaitReason) === 'tool_request', {
      message: 'MaestroWaitReason=tool_request',
    });
    assert.equal((await handle.describe()).typedSearchAttributes.get(MaestroStatus), 'waiting_human');

    const { requests } = await getJobWithRequests(job.id);
    assert.equal(requests.length, 1);
    assert.equal(requests[0].kind, 'tool');
    assert.deepEqual(requests[0].args, { tool: 'Write' });
    assert.equal(requests[0].status, 'pending');
    assert.equal(requests[0].reason, 'save the result to output/');
    assert.deepEqual((await api<RequestView>('GET', `/api/requests/${requests[0].id}`)).body, requests[0]);

    const decided = await api<RequestView>('POST', `/api/requests/${requests[0].id}/decision`, { decision: 'approved', note: 'go ahead' });
    assert.equal(decided.status, 200);
    assert.equal(decided.body.status, 'approved');
    assert.equal(decided.body.note, 'go ahead');

    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed', row.reason ?? '');
    assert.equal(await readFile(path.join(row.workspace, 'output/ok.txt'), 'utf8'), 'approved\n');
    assert.equal((await listRequests(stack.db, job.id)).length, 1, 'the re-run made no second request');
    assert.equal(await parkCount(job.id), 1, 'parked once');
    // The re-run's RequestTool answered "approved" and the Write that followed was allowed.
    const last = requestsOf('approve').at(-1)!;
    const results = toolResultsOf(last);
    assert.match(results[0], /approved \(note: "go ahead"\)\. You may now call Write/);
    assert.doesNotMatch(results[1], /Error/);

    const again = await api<{ error: { code: string } }>('POST', `/api/requests/${requests[0].id}/decision`, { decision: 'declined' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'request_not_pending');
  });

  test('declined: the re-run is told so with the note, no second park, and the job completes', async () => {
    const requestBash = call('RequestTool', { tool: 'Bash', reason: 'run the tests' });
    scenarios.set('decline', steps([requestBash, done('did without Bash')]));
    const job = await stack.submit({ pieceYaml: pieceYaml('decline'), instruction: '[decline] run the tests' });
    await waitParked(job.id);
    const [request] = (await getJobWithRequests(job.id)).requests;

    const decided = await api<RequestView>('POST', `/api/requests/${request.id}/decision`, { decision: 'declined', note: 'no shell on this box' });
    assert.equal(decided.status, 200);
    assert.equal(decided.body.status, 'declined');

    const { result } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    assert.equal(await parkCount(job.id), 1, 'no second park');
    assert.equal((await listRequests(stack.db, job.id)).length, 1);
    const [told] = toolResultsOf(requestsOf('decline').at(-1)!);
    assert.match(told, /was declined with this note: "no shell on this box"/);
    assert.match(firstUserMessage(requestsOf('decline').at(-1)!), /## Your requests\n- tool Bash: declined \(note: no shell on this box\)/);
  });

  test('decision errors: 404 for an unknown request, 400 for a bad body', async () => {
    const unknown = await api<{ error: { code: string } }>('POST', '/api/requests/00000000-0000-4000-8000-000000000000/decision', { decision: 'approved' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
    const bad = await api<{ error: { code: string; message: string } }>('POST', '/api/requests/00000000-0000-4000-8000-000000000000/decision', { decision: 'maybe' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /^decision:/);
    assert.equal((await api('GET', '/api/requests/not-a-uuid')).status, 400);
  });

  test('approval_timeout: an undecided request expires, and the re-run prompt says so', async () => {
    scenarios.set('expire', (req) => {
      if (/- tool Bash: expired/.test(firstUserMessage(req))) return done('went on without Bash');
      return call('RequestTool', { tool: 'Bash', reason: 'run the tests' });
    });
    const job = await stack.submit({ pieceYaml: pieceYaml('expire', 'approval_timeout: 2'), instruction: '[expire] run the tests' });
    const { result } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed');
    const requests = await listRequests(stack.db, job.id);
    assert.equal(requests.length, 1);
    assert.equal(requests[0].status, 'expired');
    assert.equal(await parkCount(job.id), 1);
    const late = await api<{ error: { code: string } }>('POST', `/api/requests/${requests[0].id}/decision`, { decision: 'approved' });
    assert.equal(late.status, 409, 'an expired request cannot be decided');
  });

  test('RequestPackage (pip): approved, the re-run installs it into the workspace and records the log', async () => {
    const requestPkg = call('RequestPackage', { manager: 'pip', name: 'maestro-tiny', version: '1.0.0', reason: 'parse the input' });
    scenarios.set('pip', steps([requestPkg, requestPkg, done('installed and used it')]));
    const job = await stack.submit({ pieceYaml: pieceYaml('pip'), instruction: '[pip] use a package' });
    const parked = await waitParked(job.id);
    assert.equal(parked.waitReason, 'package_request');
    const [request] = (await getJobWithRequests(job.id)).requests;
    assert.equal(request.kind, 'package');
    assert.deepEqual(request.args, { manager: 'pip', name: 'maestro-tiny', version: '1.0.0' });

    assert.equal((await api('POST', `/api/requests/${request.id}/decision`, { decision: 'approved' })).status, 200);
    const { result, job: row } = await stack.finish(job.id);
    assert.equal(result?.status, 'completed', row.reason ?? '');

    const stored = (await listRequests(stack.db, job.id))[0];
    assert.match(stored.result ?? '', /^installed: python3 -I -m pip install .*maestro-tiny==1\.0\.0/);
    assert.match(stored.result ?? '', /Successfully installed maestro-tiny-1\.0\.0/);
    assert.equal(await readFile(path.join(row.workspace, '.packages/python/maestro_tiny/__init__.py'), 'utf8'), 'VALUE = 42\n');
    const [installed, already] = toolResultsOf(requestsOf('pip').at(-1)!);
    assert.match(installed, /is now installed .*PYTHONPATH=\.packages\/python/s);
    assert.match(already, /is installed already/);
    assert.equal((await listRequests(stack.db, job.id)).length, 1);
    assert.equal(await parkCount(job.id), 1);
  });

  test('CLI: maestro show lists the requests, maestro approve decides, a second decision exits 1 with 409', async () => {
    scenarios.set('cli', steps([call('RequestTool', { tool: 'Glob', reason: 'find the files' }), call('Glob', { pattern: '**/*' }), done('listed')]));
    const job = await stack.submit({ pieceYaml: pieceYaml('cli'), instruction: '[cli] list the files' });
    await waitParked(job.id);
    const http = await startTestApi(stack);
    try {
      const shown = await runCli(http.url, ['show', job.id]);
      assert.equal(shown.code, 0, shown.stderr);
      const [request] = (await getJobWithRequests(job.id)).requests;
      assert.match(shown.stdout, new RegExp(`requests \\(1\\)\\n\\s+ID\\s+KIND\\s+WHAT\\s+STATUS\\s+REASON\\s+NOTE\\n\\s+${request.id}\\s+tool\\s+tool Glob\\s+pending\\s+find the files\\s+-\\n`));
      assert.match(shown.stdout, /maestro approve\|decline REQUEST_ID/);
      const json = JSON.parse((await runCli(http.url, ['show', job.id, '--json'])).stdout) as { requests: RequestView[] };
      assert.deepEqual(json.requests.map((r) => [r.id, r.status]), [[request.id, 'pending']]);

      const approved = await runCli(http.url, ['approve', request.id, '--note', 'sure']);
      assert.equal(approved.code, 0, approved.stderr);
      assert.equal(approved.stdout, `request ${request.id} (tool Glob) approved; job ${job.id} resumes\n`);
      const { result } = await stack.finish(job.id);
      assert.equal(result?.status, 'completed');

      const declined = await runCli(http.url, ['decline', request.id, '--json']);
      assert.equal(declined.code, 1);
      assert.match(declined.stderr, /is approved already.*\(409 request_not_pending\)/);
    } finally {
      await http.stop();
    }
  });
});
