// A token holder names a workspace beneath a folder another job's Bash owns, while that job swaps
// the folder with a symlink to the outside as fast as it can (renameat2 RENAME_EXCHANGE). No job may
// be handed a folder outside the roots, and nothing may be created outside.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { submitJob } from '../../api/job-actions.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';

let stack: TestStack;
let outside: string;

before(async () => {
  stack = await startTestStack({ script: () => ({ content: 'x' }), worker: false });
  outside = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-outside-'));
});
after(async () => {
  await stack?.stop();
  await fs.rm(outside, { recursive: true, force: true });
});

test('workspace creation never follows a symlink raced in on the way', async () => {
  const owned = path.join(stack.home, 'workspaces', 'other-job');
  await fs.mkdir(path.join(owned, 'sub'), { recursive: true });
  await fs.symlink(outside, path.join(owned, 'link'));
  const swapper = spawn('python3', [
    '-c',
    'import ctypes, sys, time\n' +
      'libc = ctypes.CDLL(None, use_errno=True)\n' +
      'a, b = sys.argv[1].encode(), sys.argv[2].encode()\n' +
      'end = time.time() + 120\n' +
      'while time.time() < end:\n' +
      '    libc.renameat2(-100, a, -100, b, 2)\n',
    path.join(owned, 'sub'),
    path.join(owned, 'link'),
  ]);
  let created = 0;
  let refused = 0;
  try {
    for (let i = 0; i < 200; i++) {
      try {
        const job = await submitJob(
          { db: stack.db, client: stack.client, config: stack.config },
          { piece: 'chat', instruction: 'x', workspace: path.join(owned, 'sub', `n${i}`) },
        );
        created++;
        assert.ok(job.workspace.startsWith(`${stack.home}${path.sep}`), `job ${job.id} got ${job.workspace}`);
      } catch (err) {
        if (!/invalid_workspace|workspace/.test(String((err as Error).message))) throw err;
        refused++;
      }
    }
  } finally {
    swapper.kill();
  }
  assert.deepEqual(await fs.readdir(outside), [], 'nothing was created outside the roots');
  assert.ok(created > 0 && refused > 0, `both sides of the race were hit (created ${created}, refused ${refused})`);
});
