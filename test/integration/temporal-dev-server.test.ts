// The Temporal dev server the test runner shares (TEMPORAL_ADDRESS) and startTemporalDevServer itself.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../../config/config.js';
import { SEARCH_ATTRIBUTES } from '../../core/types.js';
import { ensureTemporalCli } from '../../infra/temporal-cli.js';
import { isPortFree } from '../../infra/ports.js';
import { startTemporalDevServer, TemporalDevServerError } from '../../infra/temporal-dev-server.js';
import { waitFor } from '../helpers/wait-for.js';

// temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD (@temporalio/proto is CommonJS
// without named ESM exports, and only a transitive dependency).
const KEYWORD = 2;

async function customSearchAttributes(address: string, namespace: string): Promise<Record<string, number>> {
  const connection = await Connection.connect({ address });
  try {
    const res = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.fromEntries(Object.entries(res.customAttributes ?? {}).map(([k, v]) => [k, Number(v)]));
  } finally {
    await connection.close();
  }
}

function assertMaestroAttributes(attrs: Record<string, number>): void {
  for (const name of Object.values(SEARCH_ATTRIBUTES)) {
    assert.equal(attrs[name], KEYWORD, `search attribute ${name} is registered as Keyword`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('temporal dev server', () => {
  it("the test run's shared server has Maestro's search attributes", async () => {
    const address = process.env.TEMPORAL_ADDRESS;
    assert.ok(address, 'TEMPORAL_ADDRESS is set by scripts/test.ts (run the suite with `npm test`)');
    assertMaestroAttributes(await customSearchAttributes(address, loadConfig().temporal.namespace));
  });

  it('starts on free ports with a SQLite file and a namespace of its own, and stops', async () => {
    const cliPath = await ensureTemporalCli(loadConfig().home, () => undefined);
    assert.ok(existsSync(cliPath));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-temporal-'));
    const dbFile = path.join(dir, 'nested', 'temporal.db');
    try {
      const server = await startTemporalDevServer({ cliPath, port: 0, dbFile, namespace: 'maestro-test', logFile: path.join(dir, 'temporal.log') });
      let stopped = false;
      try {
        assert.match(server.address, /^127\.0\.0\.1:\d+$/);
        const port = Number(server.address.split(':')[1]);
        assert.equal(server.uiUrl, `http://127.0.0.1:${port + 1000}`);
        assert.ok(existsSync(dbFile), 'the SQLite file (and its folder) exist');
        assertMaestroAttributes(await customSearchAttributes(server.address, 'maestro-test'));
        await server.stop();
        stopped = true;
        assert.equal(isAlive(server.pid), false, 'the server process is gone after stop()');
        await waitFor(() => isPortFree(port), { timeoutMs: 10_000, message: `port ${port} freed after stop()` });
      } finally {
        if (!stopped) await server.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports an early exit with the tail of the CLI output', async () => {
    const cliPath = await ensureTemporalCli(loadConfig().home, () => undefined);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-temporal-'));
    try {
      // A folder where the SQLite file should be: the CLI exits at once.
      await assert.rejects(
        startTemporalDevServer({ cliPath, port: 0, headless: true, dbFile: dir, startTimeoutMs: 30_000 }),
        (err: Error) =>
          err instanceof TemporalDevServerError &&
          /exited early/.test(err.message) &&
          /SQLite/i.test(err.outputTail) &&
          err.message.includes(err.outputTail),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
