// Which Host and Origin values the API answers to: its own names only (DNS rebinding, cross-site posts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHostPolicy, guardRequest } from '../../api/host-guard.js';

describe('host policy', () => {
  it('a loopback listener answers to its loopback names with its port, and nothing else', () => {
    const p = createHostPolicy({ host: '127.0.0.1', port: 8787 });
    for (const h of ['127.0.0.1:8787', 'localhost:8787', 'LOCALHOST:8787', '[::1]:8787', 'localhost.:8787']) assert.ok(p.allowsHost(h), h);
    for (const h of ['evil.example:8787', '127.0.0.1', '127.0.0.1:8788', 'localhost', 'evil.localhost:8787', '127.0.0.1:8787@evil', '', 'a b:8787']) {
      assert.ok(!p.allowsHost(h), h);
    }
  });

  it('adds MAESTRO_API_ALLOWED_HOSTS entries (any port without one) and the MAESTRO_API_URL host', () => {
    const p = createHostPolicy({ host: '127.0.0.1', port: 8787, allowedHosts: ['maestro.example.com', 'proxy:9000'], publicUrl: 'https://api.example.org' });
    assert.ok(p.allowsHost('maestro.example.com'));
    assert.ok(p.allowsHost('maestro.example.com:443'));
    assert.ok(p.allowsHost('proxy:9000'));
    assert.ok(!p.allowsHost('proxy:9001'));
    assert.ok(p.allowsHost('api.example.org:443'));
    assert.ok(!p.allowsHost('api.example.org'), 'no port means 80 for a Host header');
  });

  it('a wildcard listener answers to loopback and the machine addresses, not to names', () => {
    const p = createHostPolicy({ host: '0.0.0.0', port: 8787 });
    assert.ok(p.allowsHost('127.0.0.1:8787'));
    assert.ok(!p.allowsHost('rebind.attacker.example:8787'));
  });

  it('origins must be the API itself', () => {
    const p = createHostPolicy({ host: '127.0.0.1', port: 8787, allowedHosts: ['maestro.example.com'] });
    assert.ok(p.allowsOrigin('http://127.0.0.1:8787'));
    assert.ok(p.allowsOrigin('https://maestro.example.com'));
    for (const o of ['null', 'http://evil.example', 'http://127.0.0.1:9999', 'file://', 'chrome-extension://abc', 'http://127.0.0.1:8787/path', 'junk']) {
      assert.ok(!p.allowsOrigin(o), o);
    }
  });

  it('guardRequest answers 421 for a foreign Host and 403 for a foreign Origin, as JSON errors', async () => {
    const p = createHostPolicy({ host: '127.0.0.1', port: 8787 });
    const ok = new Request('http://127.0.0.1:8787/api/health', { headers: { host: '127.0.0.1:8787' } });
    assert.equal(guardRequest(ok, p), null);
    const badHost = guardRequest(new Request('http://evil.example:8787/api/health', { headers: { host: 'evil.example:8787' } }), p);
    assert.equal(badHost?.status, 421);
    assert.equal(((await badHost!.json()) as { error: { code: string } }).error.code, 'misdirected_request');
    const badOrigin = guardRequest(new Request('http://127.0.0.1:8787/api/jobs', { headers: { host: '127.0.0.1:8787', origin: 'http://evil.example' } }), p);
    assert.equal(badOrigin?.status, 403);
    assert.equal(((await badOrigin!.json()) as { error: { code: string } }).error.code, 'forbidden_origin');
  });
});
