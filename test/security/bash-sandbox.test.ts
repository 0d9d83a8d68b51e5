// A hostile model with Bash: it reads environments, probes the worker's loopback services, reads
// beside its workspace, and leaves processes behind. Each of these must get nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configureSandbox } from '../../engine/sandbox/index.js';
import { executeTool, FILE_TOOLS } from '../../engine/tools/index.js';
import type { ToolContext, ToolOutput } from '../../engine/tools/tool.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';
import { loadConfig } from '../../config/config.js';
import { hostProcessesWith, uniqueSleepSeconds } from '../helpers/host-processes.js';
import { waitFor } from '../helpers/wait-for.js';

const SECRETS = {
  MAESTRO_LLM_API_KEY: `sk-test-${randomUUID()}`,
  MAESTRO_API_TOKEN: `tok-${randomUUID()}`,
  DATABASE_URL: `postgres://maestro:pw-${randomUUID()}@127.0.0.1:5432/maestro`,
};
const saved: Record<string, string | undefined> = {};
let base: string;
let ws: Workspace;
let server: net.Server;
let port: number;
const connections: string[] = [];

const bash = FILE_TOOLS.find((t) => t.name === 'Bash')!;
function run(command: string, over: Partial<ToolContext> = {}, timeout_ms?: number): Promise<ToolOutput> {
  const ctx: ToolContext = { jobId: 'job-1', workspace: ws, signal: new AbortController().signal, budgetTokens: 20_000, ...over };
  return executeTool(bash, JSON.stringify({ command, timeout_ms }), ctx);
}

before(async () => {
  for (const [k, v] of Object.entries(SECRETS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  configureSandbox(loadConfig({ ...process.env, MAESTRO_SANDBOX: 'bwrap' }).sandbox);
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-bash-sec-'));
  ws = await prepareWorkspace(path.join(base, 'job'));
  await fs.writeFile(path.join(base, 'secret.txt'), SECRETS.MAESTRO_LLM_API_KEY);
  await fs.mkdir(path.join(base, 'other-job'));
  await fs.writeFile(path.join(base, 'other-job', 'notes.txt'), `other ${SECRETS.MAESTRO_API_TOKEN}`);
  // A stand-in for every loopback service of the worker (API, LLM endpoint, database, Temporal).
  server = net.createServer((s) => {
    connections.push(String(s.remotePort));
    s.end('hello');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});

after(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  server.close();
  await fs.rm(base, { recursive: true, force: true });
});

function assertNoSecret(text: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    assert.ok(!text.includes(value), `${name} leaked: ${text.slice(0, 500)}`);
  }
}

describe('Bash in the sandbox', () => {
  it('sees no secret in any environment it can read', async () => {
    const out = await run('env; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done; cat /proc/self/environ; ps -ef 2>/dev/null; echo done');
    assert.match(out.content, /done/);
    assertNoSecret(out.content);
    assert.doesNotMatch(out.content, /MAESTRO_|DATABASE_URL/);
  });

  it('sees nothing of the host beside its workspace', async () => {
    await fs.writeFile(path.join(ws.root, 'mine.txt'), 'mine');
    const out = await run(
      `cat mine.txt; echo; cat ../secret.txt ${base}/secret.txt ../other-job/notes.txt 2>&1; ls -a / /home /root ${os.homedir()} ${process.cwd()} 2>&1; ` +
        'echo; cat /proc/[0-9]*/comm',
    );
    assert.match(out.content, /^exit code: \d+\nmine/);
    assertNoSecret(out.content);
    assert.match(out.content, /No such file or directory/);
    assert.doesNotMatch(out.content, /^node$/m, 'no host process is visible');
    assert.match(out.content, /^bwrap$/m, 'only the sandbox\'s own processes are');
  });

  it('cannot reach the worker\'s loopback services, with or without network', async () => {
    for (const network of [false, true]) {
      const probe = [`127.0.0.1`, `localhost`, `10.0.2.2`, `::1`]
        .map((h) => `(exec 3<>/dev/tcp/${h}/${port} && echo REACHED-${h}) 2>/dev/null || echo refused-${h}`)
        .join('; ');
      const out = await run(probe, { sandbox: { network, env: {} } }, 20_000);
      assert.doesNotMatch(out.content, /REACHED/, `network=${network}: ${out.content}`);
      assert.match(out.content, /refused-127\.0\.0\.1/);
    }
    assert.equal(connections.length, 0, 'the stand-in service saw no connection');
  });

  it('leaves no process behind after it exits, times out or is cancelled', async () => {
    const marker = uniqueSleepSeconds();
    const spawnAll = `sleep ${marker} & setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & ( ( sleep ${marker} & ) & ); disown -a`;
    const exited = await run(`${spawnAll}; echo started`);
    assert.match(exited.content, /started/);
    assert.deepEqual(await hostProcessesWith(`sleep ${marker}`), [], 'after exit');

    const timedOut = await run(`${spawnAll}; sleep 600`, {}, 1_000);
    assert.match(timedOut.content, /timed out/);
    assert.deepEqual(await hostProcessesWith(`sleep ${marker}`), [], 'after timeout');

    const ac = new AbortController();
    const cancelled = run(`${spawnAll}; sleep 600`, { signal: ac.signal });
    await waitFor(async () => (await hostProcessesWith(`sleep ${marker}`)).length >= 4, { timeoutMs: 10_000 });
    ac.abort();
    assert.match((await cancelled).content, /cancelled/);
    assert.deepEqual(await hostProcessesWith(`sleep ${marker}`), [], 'after cancel');
  });

  it('cannot take the worker down through the descriptors it inherits from bwrap', async () => {
    for (const network of [false, true]) {
      const out = await run(
        'for fd in 3 4 5 6 7 8; do { echo \'{"child-pid": 1}\' >&$fd; head -c 2000000 /dev/zero >&$fd; exec {fd}>&-; } 2>/dev/null; done; echo survived',
        { sandbox: { network, env: {} } },
      );
      assert.match(out.content, /^exit code: 0\nsurvived/, `network=${network}: ${out.content}`);
    }
    const after = await run('echo still-fine');
    assert.match(after.content, /still-fine/);
  });

  it('is held to its process, file-size and CPU limits', async () => {
    configureSandbox({ ...loadConfig({ ...process.env, MAESTRO_SANDBOX: 'bwrap' }).sandbox, limits: { cpuSeconds: 1, memoryBytes: 512 * 1024 * 1024, processes: 32, fileBytes: 1024 * 1024, openFiles: 256 } });
    try {
      const forks = await run('for i in $(seq 1 200); do sleep 5 & done; echo spawned', {}, 30_000);
      assert.match(forks.content, /fork: (retry: )?(Resource temporarily unavailable|Interrupted system call)/);
      const big = await run('head -c 5000000 /dev/zero > big.bin; echo rc=$?; stat -c %s big.bin');
      assert.match(big.content, /rc=153|File size limit/);
      const cpu = await run('while :; do :; done', {}, 20_000);
      assert.match(cpu.content, /CPU time limit|exit code: 152|killed by signal/);
    } finally {
      configureSandbox(loadConfig({ ...process.env, MAESTRO_SANDBOX: 'bwrap' }).sandbox);
      await fs.rm(path.join(ws.root, 'big.bin'), { force: true });
    }
  });

  it('writes only inside its workspace, where the file tools then refuse links that lead out', async () => {
    const out = await run(
      `echo x > /usr/pwned 2>&1; echo x > /etc/pwned 2>&1; ln -s ${base}/secret.txt out-abs; ln -s ../secret.txt out-rel; ln -s /proc/self/root/etc/hostname out-proc; echo ok`,
    );
    assert.match(out.content, /Read-only file system/);
    const read = FILE_TOOLS.find((t) => t.name === 'Read')!;
    for (const link of ['out-abs', 'out-rel', 'out-proc']) {
      const r = await executeTool(read, JSON.stringify({ path: link }), { jobId: 'j', workspace: ws, signal: new AbortController().signal, budgetTokens: 2000 });
      assert.ok(r.isError, `${link} refused: ${r.content}`);
      assertNoSecret(r.content);
    }
  });

  it('runs nothing once its workspace, or a folder above it, has been swapped for a symlink', async () => {
    // The workspace itself replaced by a link to the folder holding the secret.
    const moved = `${ws.root}-moved`;
    await fs.rename(ws.root, moved);
    await fs.symlink(base, ws.root);
    try {
      const out = await run('cat secret.txt; touch ran-in-swapped.txt');
      assert.ok(out.isError, out.content);
      assert.match(out.content, /cannot be opened as a directory/);
      await assert.rejects(fs.stat(path.join(base, 'ran-in-swapped.txt')));
    } finally {
      await fs.unlink(ws.root);
      await fs.rename(moved, ws.root);
    }
    // A folder above it replaced by a link to a look-alike tree.
    const nested = await prepareWorkspace(path.join(base, 'parent', 'job'));
    await fs.rename(path.join(base, 'parent'), path.join(base, 'parent-moved'));
    await fs.mkdir(path.join(base, 'decoy', 'job'), { recursive: true });
    await fs.writeFile(path.join(base, 'decoy', 'job', 'secret.txt'), SECRETS.MAESTRO_API_TOKEN);
    await fs.symlink(path.join(base, 'decoy'), path.join(base, 'parent'));
    const out = await run('cat secret.txt', { workspace: nested });
    assert.ok(out.isError, out.content);
    assert.match(out.content, /now leads to .*decoy\/job; refusing to run anything there/);
    assertNoSecret(out.content);
  });

  it('answers with a clear error, and runs nothing, when bubblewrap cannot be found', async () => {
    configureSandbox({ ...loadConfig({ ...process.env, MAESTRO_SANDBOX: 'bwrap' }).sandbox, bwrapBinary: path.join(base, 'no-such-bwrap') });
    try {
      const out = await run('touch ran.txt');
      assert.ok(out.isError);
      assert.match(out.content, /needs bubblewrap, which is not installed: install bubblewrap \(Debian\/Ubuntu: apt-get install bubblewrap/);
      await assert.rejects(fs.stat(path.join(ws.root, 'ran.txt')));
    } finally {
      configureSandbox(loadConfig({ ...process.env, MAESTRO_SANDBOX: 'bwrap' }).sandbox);
    }
  });
});
