// The generated API token: made once, 0600 in a private folder, reused, and MAESTRO_API_TOKEN wins.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiClient } from '../../cli/api-client.js';
import { ApiTokenFileError, ensureApiToken, readApiTokenFileSync } from '../../config/api-token.js';
import { loadConfig } from '../../config/config.js';

describe('ensureApiToken', () => {
  let base: string;
  before(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'maestro-token-'));
  });
  after(() => rm(base, { recursive: true, force: true }));

  it('generates the token file on first use, private, and reuses it', async () => {
    const home = path.join(base, 'home');
    const first = await ensureApiToken(home);
    assert.equal(first.source, 'generated');
    assert.equal(first.file, path.join(home, 'api-token'));
    assert.ok(first.token.length >= 32);
    assert.equal((await stat(first.file)).mode & 0o777, 0o600);
    assert.equal((await stat(home)).mode & 0o077, 0);
    assert.equal((await readFile(first.file, 'utf8')).trim(), first.token);
    const again = await ensureApiToken(home);
    assert.deepEqual([again.source, again.token], ['file', first.token]);
    assert.equal(readApiTokenFileSync(home), first.token);
  });

  it('MAESTRO_API_TOKEN wins and writes nothing', async () => {
    const home = path.join(base, 'env-home');
    const info = await ensureApiToken(home, 'operator-token-0123456789');
    assert.deepEqual([info.source, info.token], ['env', 'operator-token-0123456789']);
    assert.equal(readApiTokenFileSync(home), undefined);
  });

  it('tightens a world-readable home and token file; refuses a symlinked or short token file', async () => {
    const home = path.join(base, 'loose');
    const { file, token } = await ensureApiToken(home);
    await chmod(home, 0o755);
    await chmod(file, 0o644);
    assert.equal((await ensureApiToken(home)).token, token);
    assert.equal((await stat(home)).mode & 0o077, 0);
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    const linked = path.join(base, 'linked');
    await ensureApiToken(path.join(base, 'other'));
    await ensureApiToken(linked).then(() => rm(path.join(linked, 'api-token')));
    await symlink(path.join(base, 'other', 'api-token'), path.join(linked, 'api-token'));
    await assert.rejects(ensureApiToken(linked), ApiTokenFileError);

    const short = path.join(base, 'short');
    await ensureApiToken(short);
    await writeFile(path.join(short, 'api-token'), 'abc\n');
    await assert.rejects(ensureApiToken(short), /shorter than 16/);
  });

  it('two processes starting at once agree on one token', async () => {
    const home = path.join(base, 'race');
    const all = await Promise.all(Array.from({ length: 8 }, () => ensureApiToken(home)));
    assert.equal(new Set(all.map((a) => a.token)).size, 1);
  });
});

describe('the CLI client and the token file', () => {
  it('uses the file when MAESTRO_API_TOKEN is unset, only for the local API', async () => {
    const home = await mkdtemp(path.join(tmpdir(), 'maestro-client-'));
    try {
      const { token } = await ensureApiToken(home);
      const read = (h: string) => readApiTokenFileSync(h);
      const local = ApiClient.fromConfig(loadConfig({ MAESTRO_HOME: home }), read) as unknown as { token?: string };
      assert.equal(local.token, token);
      const env = ApiClient.fromConfig(loadConfig({ MAESTRO_HOME: home, MAESTRO_API_TOKEN: 'from-env-0123456789' }), read) as unknown as { token?: string };
      assert.equal(env.token, 'from-env-0123456789');
      const remote = ApiClient.fromConfig(loadConfig({ MAESTRO_HOME: home, MAESTRO_API_URL: 'https://elsewhere.example' }), read) as unknown as { token?: string };
      assert.equal(remote.token, undefined, 'the local token is not sent to another server');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
