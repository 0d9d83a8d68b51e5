#!/usr/bin/env node
// First step of `npm run demo`, `npm test` and `npm start` on a fresh clone: installs the npm
// packages from the lockfile when node_modules is missing or was installed from another lockfile.
// Plain JavaScript with no dependencies, because it runs before there are any.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lockfile = path.join(root, 'package-lock.json');
const stamp = path.join(root, 'node_modules', '.maestro-lockfile-sha256');
const want = createHash('sha256').update(readFileSync(lockfile)).digest('hex');
const have = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';

if (have !== want) {
  console.error('[maestro] installing npm packages from package-lock.json (npm ci)...');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('[maestro] npm ci failed; see the output above');
    process.exit(result.status ?? 1);
  }
  writeFileSync(stamp, `${want}\n`);
}
