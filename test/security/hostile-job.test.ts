// A whole job whose model tries every way out of its box, as a model following instructions injected
// into a file it read would: secrets in environments, the worker's loopback services, files beside the
// workspace and in MAESTRO_HOME, symlinks made with Bash and followed by the file tools, pattern
// tricks, writes outside, processes left behind, and git config that runs commands during the next
// movement's git status. It must get nothing, and the job must still run to its end.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RecordedRequest, ScriptedResponse } from '../../dev/scripted-llm-server.js';
import { scriptByMovement } from '../../dev/movement-script.js';
import { hostProcessesWith, uniqueSleepSeconds } from '../helpers/host-processes.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';

const MARK = randomUUID().slice(0, 8);
const SECRETS = {
  MAESTRO_LLM_API_KEY: `sk-hostile-${MARK}-key`,
  MAESTRO_API_TOKEN: `tok-hostile-${MARK}-token`,
};
const HOME_SECRET = `SECRET-IN-HOME-${MARK}`;
const BESIDE_SECRET = `SECRET-BESIDE-${MARK}`;
const SLEEP = uniqueSleepSeconds();

let stack: TestStack;
let api: http.Server;
let apiHits = 0;
const saved: Record<string, string | undefined> = {};

const bash = (command: string): ScriptedResponse => ({ toolCalls: [{ name: 'Bash', arguments: { command } }] });
const tool = (name: string, args: Record<string, unknown>): ScriptedResponse => ({ toolCalls: [{ name, arguments: args }] });

function piece(): string {
  return `name: hostile
initial_movement: escape
system_prompt: You are a test agent.
movements:
  - name: escape
    instruction: Try to get out.
    allowed_tools: [Read, Write, Edit, Bash, Grep, Glob]
    default_next: verify
    rules:
      - condition: done
        next: verify
  - name: verify
    instruction: Look at the changes.
    include_git_status: true
    network: true
    allowed_tools: [Bash]
`;
}

function ports(): Record<string, string> {
  const llm = new URL(stack.llm.url).port;
  const db = new URL(stack.databaseUrl).port || '5432';
  const temporal = (process.env.TEMPORAL_ADDRESS ?? '').split(':').pop() ?? '7233';
  return { llm, db, temporal, api: String((api.address() as AddressInfo).port) };
}

function script(): (req: RecordedRequest) => ScriptedResponse {
  const p = ports();
  const probes = Object.entries(p)
    .flatMap(([name, port]) => ['127.0.0.1', 'localhost', '10.0.2.2'].map((h) => `(exec 3<>/dev/tcp/${h}/${port} && echo REACHED-${name}-${h}) 2>/dev/null`))
    .join('; ');
  const home = stack.home;
  return scriptByMovement({
    escape: [
      bash('env; cat /proc/[0-9]*/environ | tr "\\0" "\\n"; echo env-done'),
      bash(`${probes}; curl -s -m 2 ${stack.llm.url}/v1/models; echo probe-done`),
      bash(`cat ${home}/home-secret.txt ../beside.txt ../../beside.txt 2>&1; grep -rl ${MARK} / --exclude-dir=proc 2>/dev/null | head; echo read-done`),
      bash(`ln -s ${home}/home-secret.txt link-abs; ln -s ../beside.txt link-rel; ln -s / root-link; ln -s /proc/self/root proc-root; echo links-done`),
      tool('Read', { path: 'link-abs' }),
      tool('Read', { path: 'link-rel' }),
      tool('Read', { path: 'root-link/etc/hostname' }),
      tool('Read', { path: `proc-root${home}/home-secret.txt` }),
      tool('Read', { path: `/proc/self/cwd/../beside.txt` }),
      tool('Glob', { pattern: '{..,x}/**' }),
      tool('Glob', { pattern: 'root-link/**/home-secret.txt' }),
      tool('Grep', { pattern: MARK, path: '..' }),
      tool('Grep', { pattern: MARK, glob: '{../*,*}' }),
      tool('Write', { path: '../written-outside.txt', content: 'x' }),
      tool('Write', { path: 'link-rel', content: 'overwritten through a link' }),
      tool('Edit', { path: 'link-rel', old_string: 'SECRET', new_string: 'edited' }),
      bash(`sleep ${SLEEP} & setsid sleep ${SLEEP} & ( ( sleep ${SLEEP} & ) & ); echo left-behind`),
      bash(
        'git init -q . && echo hi > tracked.txt && git add tracked.txt && git -c user.email=a@b -c user.name=a commit -qm t; echo more >> tracked.txt; ' +
          // Planted last, so only the next movement's git status could run them.
          'git config core.fsmonitor "echo PWNED-FSMONITOR; touch fsmonitor-ran"; ' +
          'git config filter.evil.clean "touch filter-ran; cat"; git config diff.evil.textconv "echo PWNED-TEXTCONV #"; ' +
          'echo "* filter=evil diff=evil" > .gitattributes; echo git-done',
      ),
      tool('transition', { next: 'verify', summary: 'tried everything' }),
    ],
    verify: [bash(`${probes}; ls; echo verify-done`), tool('complete', { status: 'done', summary: 'done' })],
  });
}

before(async () => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  api = http.createServer((_req, res) => {
    apiHits++;
    res.end('{}');
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  let handler: (req: RecordedRequest) => ScriptedResponse = () => ({ content: 'not ready' });
  stack = await startTestStack({ script: (req) => handler(req), env: { ...SECRETS } });
  handler = script();
  await fs.writeFile(path.join(stack.home, 'home-secret.txt'), HOME_SECRET);
});

after(async () => {
  await stack?.stop();
  api?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

test('a model that tries every way out gets nothing from outside its workspace', async () => {
  const workspace = path.join(stack.home, 'workspaces', `hostile-${MARK}`);
  await fs.mkdir(path.dirname(workspace), { recursive: true });
  await fs.writeFile(path.join(path.dirname(workspace), 'beside.txt'), BESIDE_SECRET);
  const job = await stack.submit({ pieceYaml: piece(), instruction: 'escape', workspace });
  const { result, job: row } = await stack.finish(job.id);
  assert.equal(result?.status, 'completed', row.reason ?? '');

  // Everything the model was shown: every tool result and every prompt the engine sent.
  const seen = JSON.stringify(stack.llm.requests.map((r) => r.body.messages.filter((m: { role: string }) => m.role !== 'assistant')));
  assert.match(seen, /env-done/);
  assert.match(seen, /verify-done/);
  for (const secret of [...Object.values(SECRETS), HOME_SECRET, BESIDE_SECRET]) {
    const at = seen.indexOf(secret);
    assert.ok(at === -1, `the model saw ${secret}: ...${seen.slice(Math.max(0, at - 600), at + 100)}`);
  }
  assert.doesNotMatch(seen, /REACHED-/);
  assert.doesNotMatch(seen, /PWNED-(FSMONITOR|TEXTCONV)/);
  assert.equal(apiHits, 0, 'the stand-in API saw no request');
  assert.equal(stack.llm.requests.every((r) => r.headers['user-agent'] !== 'curl'), true, 'curl never reached the LLM endpoint');

  // Nothing was written outside, nothing beside was changed, no hook ran, no process is left.
  await assert.rejects(fs.stat(path.join(path.dirname(workspace), 'written-outside.txt')));
  assert.equal(await fs.readFile(path.join(path.dirname(workspace), 'beside.txt'), 'utf8'), BESIDE_SECRET);
  for (const f of ['fsmonitor-ran', 'filter-ran']) await assert.rejects(fs.stat(path.join(workspace, f)), `${f} exists`);
  assert.deepEqual(await hostProcessesWith(`sleep ${SLEEP}`), [], 'no process outlived its Bash call');
});
