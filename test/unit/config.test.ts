import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, homePaths, loadConfig } from '../../config/config.js';

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const c = loadConfig({});
    assert.equal(c.temporal.address, '127.0.0.1:7233');
    assert.equal(c.temporal.namespace, 'default');
    assert.equal(c.temporal.taskQueue, 'maestro');
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.llm.model, 'gpt-4o-mini');
    assert.equal(c.llm.contextWindow, 128_000);
    assert.equal(c.home, path.resolve('.maestro'));
    assert.equal(c.api.port, 8787);
    assert.equal(c.api.host, '127.0.0.1');
    assert.equal(c.api.url, 'http://127.0.0.1:8787');
    assert.equal(c.api.token, undefined);
  });

  it('reads and coerces the variables it is given', () => {
    const c = loadConfig({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'maestro',
      MAESTRO_TASK_QUEUE: 'q1',
      DATABASE_URL: 'postgres://u:p@db:5432/maestro',
      MAESTRO_CONTEXT_WINDOW: '32768',
      MAESTRO_API_PORT: '9000',
      MAESTRO_API_HOST: '0.0.0.0',
      MAESTRO_HOME: '/tmp/maestro-home',
    });
    assert.equal(c.temporal.address, 'temporal:7233');
    assert.equal(c.temporal.namespace, 'maestro');
    assert.equal(c.temporal.taskQueue, 'q1');
    assert.equal(c.databaseUrl, 'postgres://u:p@db:5432/maestro');
    assert.equal(c.llm.contextWindow, 32768);
    assert.equal(c.api.port, 9000);
    // A wildcard bind address is not one a client can dial; the URL uses loopback.
    assert.equal(c.api.url, 'http://127.0.0.1:9000');
    assert.equal(c.home, '/tmp/maestro-home');
  });

  it('treats empty strings as unset', () => {
    const c = loadConfig({ DATABASE_URL: '', MAESTRO_API_PORT: '', TEMPORAL_ADDRESS: '' });
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.api.port, 8787);
    assert.equal(c.temporal.address, '127.0.0.1:7233');
  });

  for (const bad of ['70000', '-1', 'eighty', '80.5']) {
    it(`rejects MAESTRO_API_PORT=${bad} with a ConfigError naming the variable`, () => {
      assert.throws(
        () => loadConfig({ MAESTRO_API_PORT: bad }),
        (err: unknown) => err instanceof ConfigError && err.name === 'ConfigError' && err.message.includes('MAESTRO_API_PORT'),
      );
    });
  }

  it('rejects a DATABASE_URL that is not a URL', () => {
    assert.throws(() => loadConfig({ DATABASE_URL: 'not a url' }), ConfigError);
  });

  it('rejects a non-positive context window', () => {
    assert.throws(() => loadConfig({ MAESTRO_CONTEXT_WINDOW: '0' }), ConfigError);
  });
});

describe('homePaths', () => {
  it('places everything under the home folder', () => {
    const p = homePaths('/h');
    assert.equal(p.tools, '/h/tools');
    assert.equal(p.temporalDb, '/h/temporal/temporal.db');
    assert.equal(p.pgdata, '/h/pgdata');
    assert.equal(p.workspaces, '/h/workspaces');
  });
});

it('a per-model context window wins over MAESTRO_CONTEXT_WINDOW; a malformed table is refused', () => {
  const env = { MAESTRO_LLM_MODEL: 'qwen3-32b', MAESTRO_CONTEXT_WINDOW: '100000', MAESTRO_CONTEXT_WINDOWS: 'gpt-4o=128000, qwen3-32b = 32768' };
  assert.equal(loadConfig(env).llm.contextWindow, 32768);
  assert.equal(loadConfig({ ...env, MAESTRO_LLM_MODEL: 'other' }).llm.contextWindow, 100000);
  assert.throws(() => loadConfig({ MAESTRO_CONTEXT_WINDOWS: 'qwen3-32b:32768' }), /MAESTRO_CONTEXT_WINDOWS/);
});

it('workspace roots, pieces dirs and allowed hosts: defaults under the home, path lists, validation', () => {
  const d = loadConfig({ MAESTRO_HOME: '/h' });
  assert.deepEqual(d.workspaceRoots, ['/h/workspaces']);
  assert.equal(d.piecesDirs.length, 2);
  assert.ok(d.piecesDirs[0].endsWith(`${path.sep}pieces`));
  assert.equal(d.piecesDirs[1], '/h/pieces');
  assert.deepEqual(d.api.allowedHosts, []);
  assert.equal(homePaths('/h').apiToken, '/h/api-token');
  const c = loadConfig({
    MAESTRO_WORKSPACE_ROOTS: `/srv/a${path.delimiter} rel/b ${path.delimiter}${path.delimiter}/srv/a`,
    MAESTRO_PIECES_DIRS: '/srv/pieces',
    MAESTRO_API_ALLOWED_HOSTS: 'Maestro.Example.com, proxy:9000',
  });
  assert.deepEqual(c.workspaceRoots, ['/srv/a', path.resolve('rel/b')]);
  assert.deepEqual(c.piecesDirs, ['/srv/pieces']);
  assert.deepEqual(c.api.allowedHosts, ['maestro.example.com', 'proxy:9000']);
  assert.throws(() => loadConfig({ MAESTRO_API_ALLOWED_HOSTS: 'evil.com/x' }), /MAESTRO_API_ALLOWED_HOSTS/);
  assert.throws(() => loadConfig({ MAESTRO_WORKSPACE_ROOTS: '/a\0b' }), /MAESTRO_WORKSPACE_ROOTS/);
});
