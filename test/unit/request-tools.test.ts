// RequestTool and RequestPackage against in-memory job services: every branch of the short-circuit
// (iron rule 4) without a database or a workflow.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RequestKind, RequestStatus, RequestView } from '../../core/types.js';
import { callHash } from '../../db/repositories/requests.repo.js';
import { executeTool } from '../../engine/tools/index.js';
import { requestPackageTool } from '../../engine/tools/request-package.tool.js';
import { requestTool } from '../../engine/tools/request-tool.tool.js';
import type { ToolServices, NewRequest, ToolContext, ToolDefinition } from '../../engine/tools/tool.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';

let base: string;
let ws: Workspace;
before(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-request-tools-'));
  ws = await prepareWorkspace(path.join(base, 'job'));
});
after(() => fs.rm(base, { recursive: true, force: true }));

function fakeServices() {
  const requests: Array<RequestView & { hash: string }> = [];
  const services: ToolServices = {
    workspaceProblem: async () => null,
    async findRequest(kind: RequestKind, binding) {
      return requests.filter((r) => r.kind === kind && r.hash === callHash(kind, binding)).at(-1);
    },
    async createRequest(req: NewRequest) {
      const r = {
        id: `req-${requests.length + 1}`,
        jobId: 'job-1',
        kind: req.kind,
        args: req.args,
        reason: req.reason,
        movement: 'work',
        status: 'pending' as RequestStatus,
        note: null,
        result: null,
        createdAt: new Date().toISOString(),
        decidedAt: null,
        hash: callHash(req.kind, req.binding),
      };
      requests.push(r);
      return r;
    },
    async setRequestResult(id, result) {
      requests.find((r) => r.id === id)!.result = result;
    },
    async grantedTools() {
      return requests.filter((r) => r.kind === 'tool' && r.status === 'approved').map((r) => String(r.args.tool));
    },
    spawnChild: () => Promise.reject(new Error('not here')),
    listChildren: async () => [],
    setCaptchaSpace: async () => {},
  };
  const decide = (id: string, status: RequestStatus, note: string | null = null) => Object.assign(requests.find((r) => r.id === id)!, { status, note });
  return { services, requests, decide };
}

function ctx(services: ToolServices, extra: Pick<ToolContext, 'toolNames' | 'allowedTools'> = {}): ToolContext {
  return { jobId: 'job-1', workspace: ws, signal: new AbortController().signal, budgetTokens: 2_000, movement: 'work', services, ...extra };
}
const run = (def: ToolDefinition, args: unknown, c: ToolContext) => executeTool(def, JSON.stringify(args), c);

describe('RequestTool', () => {
  it('refuses an unknown tool and lists the tools', async () => {
    const { services, requests } = fakeServices();
    const out = await run(requestTool, { tool: 'Teleport', reason: 'x' }, ctx(services));
    assert.equal(out.isError, true);
    assert.match(out.content, /no tool "Teleport".*Read, Write, Edit, Bash/);
    const custom = await run(requestTool, { tool: 'Bash', reason: 'x' }, ctx(services, { toolNames: ['Read', 'Browse'] }));
    assert.match(custom.content, /no tool "Bash". The tools are: Read, Browse/);
    assert.equal(requests.length, 0);
  });

  it('answers "already allowed" for an always-allowed tool or one the movement allows', async () => {
    const { services, requests } = fakeServices();
    assert.match((await run(requestTool, { tool: 'WaitSubTask', reason: 'x' }, ctx(services))).content, /already allowed/);
    const out = await run(requestTool, { tool: 'Bash', reason: 'x' }, ctx(services, { allowedTools: ['Read', 'Bash'] }));
    assert.match(out.content, /Bash is already allowed in this step: just call it/);
    assert.equal(out.park, undefined);
    assert.equal(requests.length, 0);
  });

  it('creates one request and parks; pending parks again on it; approved and declined short-circuit', async () => {
    const { services, requests, decide } = fakeServices();
    const first = await run(requestTool, { tool: 'Bash', reason: 'run tests' }, ctx(services));
    assert.deepEqual(first.park && { ...first.park, summary: undefined }, {
      next: 'WAITING_HUMAN_TOOL_REQUEST',
      waitReason: 'tool_request',
      requestId: 'req-1',
      summary: undefined,
    });
    assert.match(first.park!.summary, /tool Bash \(request req-1\): run tests/);
    assert.deepEqual(requests[0].args, { tool: 'Bash' });

    const again = await run(requestTool, { tool: ' Bash ', reason: 'other words' }, ctx(services));
    assert.equal(again.park?.requestId, 'req-1', 'the same pending request, not a second one');
    assert.equal(requests.length, 1);

    decide('req-1', 'approved', 'ok');
    const approved = await run(requestTool, { tool: 'Bash', reason: 'run tests' }, ctx(services));
    assert.equal(approved.park, undefined);
    assert.match(approved.content, /approved \(note: "ok"\)\. You may now call Bash/);

    const other = await run(requestTool, { tool: 'Write', reason: 'save' }, ctx(services));
    decide(other.park!.requestId!, 'declined', 'read only');
    const declined = await run(requestTool, { tool: 'Write', reason: 'save' }, ctx(services));
    assert.equal(declined.park, undefined);
    assert.match(declined.content, /declined with this note: "read only"\. Do not ask for it again/);
    assert.equal(requests.length, 2);
  });

  it('asks again with a fresh request after the last one expired', async () => {
    const { services, requests, decide } = fakeServices();
    const first = await run(requestTool, { tool: 'Bash', reason: 'x' }, ctx(services));
    decide(first.park!.requestId!, 'expired');
    const second = await run(requestTool, { tool: 'Bash', reason: 'x' }, ctx(services));
    assert.equal(second.park?.requestId, 'req-2');
    assert.equal(requests.length, 2);
  });
});

describe('RequestPackage', () => {
  it('refuses a bad name before asking anyone', async () => {
    const { services, requests } = fakeServices();
    const out = await run(requestPackageTool, { manager: 'pip', name: 'six; rm -rf /', reason: 'x' }, ctx(services));
    assert.equal(out.isError, true);
    assert.match(out.content, /not a valid pip package name/);
    assert.equal(requests.length, 0);
  });

  it('parks package_request bound to manager, name and version; declined short-circuits', async () => {
    const { services, requests, decide } = fakeServices();
    const args = { manager: 'npm', name: 'is-number', version: '7.0.0', reason: 'check input' };
    const first = await run(requestPackageTool, args, ctx(services));
    assert.equal(first.park?.next, 'WAITING_HUMAN_TOOL_REQUEST');
    assert.equal(first.park?.waitReason, 'package_request');
    assert.deepEqual(requests[0].args, { manager: 'npm', name: 'is-number', version: '7.0.0' });
    // Another version is another call: the decision on 7.0.0 does not apply to it.
    const other = await run(requestPackageTool, { ...args, version: '6.0.0' }, ctx(services));
    assert.equal(other.park?.requestId, 'req-2');

    decide('req-1', 'declined', 'use plain JS');
    const declined = await run(requestPackageTool, args, ctx(services));
    assert.equal(declined.park, undefined);
    assert.match(declined.content, /npm package is-number@7\.0\.0 .* declined with this note: "use plain JS"/);
  });

  it('approved and installed already: no second install', async () => {
    const { services, decide } = fakeServices();
    const args = { manager: 'pip', name: 'six', reason: 'x' };
    const first = await run(requestPackageTool, args, ctx(services));
    decide(first.park!.requestId!, 'approved');
    await services.setRequestResult(first.park!.requestId!, 'installed: python3 -m pip install six\nUse PYTHONPATH=.packages/python\n\nlog...');
    const out = await run(requestPackageTool, args, ctx(services));
    assert.match(out.content, /pip package six is installed already .*PYTHONPATH/s);
    assert.doesNotMatch(out.content, /log\.\.\./);
  });
});
