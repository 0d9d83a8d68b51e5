// SpinOffTask, WaitSubTask and the browser waits against an in-memory ToolServices: which calls park,
// which short-circuit (iron rule 4), and how a spawn workspace is resolved.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RequestView } from '../../core/types.js';
import { browserLoginWait, captchaWait } from '../../engine/browser/browser-wait.js';
import { executeTool } from '../../engine/tools/index.js';
import { resolveSpawnWorkspace, spinOffTaskTool } from '../../engine/tools/spin-off-task.tool.js';
import type { ToolServices, SpawnInput, ToolContext } from '../../engine/tools/tool.js';
import { waitSubTaskTool } from '../../engine/tools/wait-sub-task.tool.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';

let base: string;
let ws: Workspace;

before(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-subtasks-')));
  ws = await prepareWorkspace(path.join(base, 'job'));
});
after(async () => fs.rm(base, { recursive: true, force: true }));

type Child = { id: string; status: string; summary: string | null; instruction: string };

function fakeServices(opts: { children?: Child[]; requests?: RequestView[]; workspaceProblem?: string } = {}) {
  const spawned: SpawnInput[] = [];
  const created: RequestView[] = [];
  let captchaSpace: string | null = null;
  const requests = opts.requests ?? [];
  const services: ToolServices = {
    workspaceProblem: async () => opts.workspaceProblem ?? null,
    findRequest: async (kind) => [...requests, ...created].find((r) => r.kind === kind),
    async createRequest(req) {
      const view: RequestView = {
        id: `req-${created.length + 1}`,
        jobId: 'job-1',
        kind: req.kind,
        args: req.args,
        reason: req.reason,
        movement: 'work',
        status: 'pending',
        note: null,
        result: null,
        createdAt: new Date().toISOString(),
        decidedAt: null,
      };
      created.push(view);
      return view;
    },
    setRequestResult: async () => {},
    grantedTools: async () => [],
    async spawnChild(input) {
      spawned.push(input);
      return { jobId: 'child-1', created: spawned.length === 1, status: 'queued' };
    },
    listChildren: async () => opts.children ?? [],
    setCaptchaSpace: async (id) => {
      captchaSpace = id;
    },
  };
  return { services, spawned, created, captchaSpace: () => captchaSpace };
}

function ctx(services: ToolServices): ToolContext {
  return { jobId: 'job-1', workspace: ws, signal: new AbortController().signal, budgetTokens: 2_000, movement: 'work', services };
}

const request = (status: RequestView['status'], note: string | null = null): RequestView => ({
  id: 'req-old',
  jobId: 'job-1',
  kind: 'spawn',
  args: {},
  reason: '',
  movement: 'work',
  status,
  note,
  result: null,
  createdAt: new Date().toISOString(),
  decidedAt: null,
});

describe('resolveSpawnWorkspace', () => {
  it('no workspace: the child gets its own; this workspace or a folder in it: own; anything else: other', async () => {
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, undefined), { kind: 'own' });
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, '.'), { kind: 'own', dir: ws.root });
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, ws.root), { kind: 'own', dir: ws.root });
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, 'output/part'), { kind: 'own', dir: path.join(ws.root, 'output/part') });
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, '../sibling'), { kind: 'other', dir: path.join(base, 'sibling') });
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, '/srv/project'), { kind: 'other', dir: '/srv/project' });
    // ../job-evil shares a prefix with the workspace's name but is not inside it.
    assert.equal((await resolveSpawnWorkspace(ws.root, '../job-evil')).kind, 'other');
  });

  it('refuses the filesystem root and an existing file', async () => {
    assert.equal((await resolveSpawnWorkspace(ws.root, '/')).kind, 'invalid');
    await fs.writeFile(path.join(base, 'a-file'), 'x');
    assert.equal((await resolveSpawnWorkspace(ws.root, '../a-file')).kind, 'invalid');
  });

  it('a symlink to this workspace is this workspace', async () => {
    await fs.symlink(ws.root, path.join(base, 'link-to-job'));
    assert.deepEqual(await resolveSpawnWorkspace(ws.root, '../link-to-job'), { kind: 'own', dir: ws.root });
  });
});

describe('SpinOffTask', () => {
  it('in its own workspace it spawns at once; the same call again is "already started"', async () => {
    const f = fakeServices();
    const first = await executeTool(spinOffTaskTool, JSON.stringify({ instruction: 'count the files', piece: 'chat' }), ctx(f.services));
    assert.equal(first.park, undefined);
    assert.match(first.content, /^started subtask job child-1 \(piece chat\)/);
    const again = await executeTool(spinOffTaskTool, JSON.stringify({ instruction: 'count the files', piece: 'chat' }), ctx(f.services));
    assert.match(again.content, /^already started as job child-1, status queued/);
    assert.deepEqual(f.spawned[0], { instruction: 'count the files', piece: 'chat', workspace: undefined });
    assert.equal(f.created.length, 0, 'no approval needed');
  });

  it('refuses a piece that is not a built-in name', async () => {
    const f = fakeServices();
    const out = await executeTool(spinOffTaskTool, JSON.stringify({ instruction: 'x', piece: '/etc/passwd.yaml' }), ctx(f.services));
    assert.equal(out.isError, true);
    const unknown = await executeTool(spinOffTaskTool, JSON.stringify({ instruction: 'x', piece: 'nope' }), ctx(f.services));
    assert.equal(unknown.isError, true);
    assert.match(unknown.content, /unknown piece "nope"/);
    assert.equal(f.spawned.length, 0);
  });

  it('a workspace outside the roots is refused before anyone is asked to approve it', async () => {
    const f = fakeServices({ workspaceProblem: 'workspace "/etc" is not inside a workspace root' });
    const out = await executeTool(spinOffTaskTool, JSON.stringify({ instruction: 'x', workspace: '/etc' }), ctx(f.services));
    assert.equal(out.isError, true);
    assert.match(out.content, /Not started: workspace "\/etc" is not inside a workspace root/);
    assert.equal(out.park, undefined);
    assert.equal(f.created.length, 0);
    assert.equal(f.spawned.length, 0);
  });

  it('toward another workspace: a request and a park; pending parks on the same request', async () => {
    const f = fakeServices();
    const args = JSON.stringify({ instruction: 'fix the other repo', workspace: '../other' });
    const out = await executeTool(spinOffTaskTool, args, ctx(f.services));
    assert.equal(f.spawned.length, 0);
    assert.equal(f.created.length, 1);
    assert.deepEqual(f.created[0].args, { instruction: 'fix the other repo', piece: null, workspace: path.join(base, 'other') });
    assert.deepEqual(out.park, {
      next: 'WAITING_HUMAN_SPAWN_REQUEST',
      waitReason: 'spawn_request',
      requestId: 'req-1',
      resumeMovement: 'work',
      summary: `waiting for approval to start a subtask in ${path.join(base, 'other')} (request req-1)`,
    });
    const again = await executeTool(spinOffTaskTool, args, ctx(f.services));
    assert.equal(again.park?.requestId, 'req-1');
    assert.equal(f.created.length, 1, 'no second request');
  });

  it('approved -> spawns in that workspace; declined -> told so, no park; expired -> asks again', async () => {
    const args = JSON.stringify({ instruction: 'fix the other repo', workspace: '/srv/other' });
    const approved = fakeServices({ requests: [request('approved')] });
    const a = await executeTool(spinOffTaskTool, args, ctx(approved.services));
    assert.equal(a.park, undefined);
    assert.deepEqual(approved.spawned, [{ instruction: 'fix the other repo', piece: undefined, workspace: '/srv/other' }]);

    const declined = fakeServices({ requests: [request('declined', 'not that repo')] });
    const d = await executeTool(spinOffTaskTool, args, ctx(declined.services));
    assert.equal(d.park, undefined);
    assert.match(d.content, /declined.*note: not that repo/);
    assert.equal(declined.spawned.length + declined.created.length, 0);

    const expired = fakeServices({ requests: [request('expired')] });
    const e = await executeTool(spinOffTaskTool, args, ctx(expired.services));
    assert.equal(e.park?.waitReason, 'spawn_request');
    assert.equal(expired.created.length, 1);
  });
});

describe('WaitSubTask', () => {
  const child = (id: string, status: string, summary: string | null = null): Child => ({ id, status, summary, instruction: id });

  it('without children: an error result, no park', async () => {
    const out = await executeTool(waitSubTaskTool, '', ctx(fakeServices().services));
    assert.equal(out.isError, true);
    assert.match(out.content, /no subtasks to wait for/);
    assert.equal(out.park, undefined);
  });

  it('with a child still running: parks and resumes the current movement', async () => {
    const out = await executeTool(waitSubTaskTool, '{}', ctx(fakeServices({ children: [child('a', 'completed'), child('b', 'running')] }).services));
    assert.deepEqual(out.park, { next: 'WAIT_SUBTASKS', waitReason: 'subtasks', resumeMovement: 'work', summary: 'waiting for 1 of 2 subtasks: b' });
  });

  it('all ended (the resumed movement calls it again): the results, no park', async () => {
    const out = await executeTool(
      waitSubTaskTool,
      '{}',
      ctx(fakeServices({ children: [child('a', 'completed', 'found 3'), child('b', 'failed')] }).services),
    );
    assert.equal(out.park, undefined);
    assert.match(out.content, /All 2 subtasks have ended:\n- job a \[completed\]: found 3\n- job b \[failed\]/);
  });
});

describe('browser waits', () => {
  it('login parks browser_login; captcha records the space and parks captcha', async () => {
    assert.deepEqual(browserLoginWait({ url: 'https://x.test/login', message: 'log in' }).park, {
      next: 'WAITING_HUMAN_BROWSER',
      waitReason: 'browser_login',
      summary: 'waiting for a person to log in at https://x.test/login: log in',
    });
    const f = fakeServices();
    const out = await captchaWait({ spaceId: ' space-a ', message: 'solve it' }, f.services);
    assert.equal(out.park?.waitReason, 'captcha');
    assert.equal(out.park?.next, 'WAITING_HUMAN_BROWSER');
    assert.equal(f.captchaSpace(), 'space-a');
  });
});
