// The production compose file: services, ports, pinned images, and env wiring that config.ts understands.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ENV_KEYS } from '../../config/config.js';
import { SEARCH_ATTRIBUTES } from '../../core/types.js';
import { BWRAP_SYSCALLS, renderWorkerSeccomp } from '../../infra/docker/derive-worker-seccomp.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Service {
  image?: string;
  build?: unknown;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string> | string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  security_opt?: string[];
  cap_drop?: string[];
}

/** Compose's ${VAR:-default} / ${VAR} interpolation, enough for the ports of this file. */
function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => vars[name] || fallback || '');
}

const compose = parse(readFileSync(`${root}docker-compose.yml`, 'utf8')) as { services: Record<string, Service> };
const services = compose.services;

function env(name: string): Record<string, string> {
  const e = services[name]?.environment ?? {};
  if (Array.isArray(e)) return Object.fromEntries(e.map((kv) => [kv.split('=')[0]!, kv.split('=').slice(1).join('=')]));
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, String(v)]));
}

function script(name: string): string {
  const cmd = services[name]?.command;
  const text = Array.isArray(cmd) ? cmd.join(' ') : (cmd ?? '');
  return text.replaceAll('$$', '$'); // compose's escape for a literal $
}

const MAESTRO = ['maestro-worker', 'maestro-api'];

describe('docker-compose.yml', () => {
  it('has the production services', () => {
    for (const s of ['postgresql', 'temporal-schema', 'temporal', 'temporal-setup', 'temporal-ui', ...MAESTRO]) {
      assert.ok(services[s], `service ${s} is missing`);
    }
  });

  it('pins every image to a version tag', () => {
    for (const [name, svc] of Object.entries(services)) {
      assert.ok(svc.image, `${name} has no image`);
      assert.match(svc.image, /^[\w./-]+:\d+(\.\d+)+$/, `${name}: image ${svc.image} is not pinned to a version`);
    }
    assert.match(services.postgresql!.image!, /^postgres:16\./);
    assert.match(services.temporal!.image!, /^temporalio\/server:/);
    assert.match(services['temporal-schema']!.image!, /^temporalio\/admin-tools:/);
    assert.match(services['temporal-ui']!.image!, /^temporalio\/ui:/);
    // Server and admin-tools must speak the same schema version.
    assert.equal(services.temporal!.image!.split(':')[1], services['temporal-schema']!.image!.split(':')[1]);
  });

  it('publishes Temporal on 7233 and the UI on 8080 on 127.0.0.1 only unless the operator opts in; the API on 8787', () => {
    const ports = (name: string, vars: Record<string, string>) => (services[name]!.ports ?? []).map((p) => interpolate(p, vars));
    assert.deepEqual(ports('temporal', {}), ['127.0.0.1:7233:7233']);
    assert.deepEqual(ports('temporal-ui', {}), ['127.0.0.1:8080:8080']);
    assert.deepEqual(ports('temporal', { TEMPORAL_PUBLISH_ADDRESS: '' }), ['127.0.0.1:7233:7233'], 'an empty value is unset');
    assert.deepEqual(ports('temporal', { TEMPORAL_PUBLISH_ADDRESS: '0.0.0.0' }), ['0.0.0.0:7233:7233']);
    assert.deepEqual(ports('temporal-ui', { TEMPORAL_PUBLISH_ADDRESS: '10.0.0.5' }), ['10.0.0.5:8080:8080']);
    // No other service publishes Temporal's ports.
    for (const [name, svc] of Object.entries(services)) {
      if (name === 'temporal' || name === 'temporal-ui') continue;
      for (const p of svc.ports ?? []) assert.doesNotMatch(p, /:(7233|8080)$/, `${name} publishes ${p}`);
    }
    assert.ok(services['maestro-api']!.ports?.includes('8787:8787'));
    assert.equal(env('temporal-ui').TEMPORAL_ADDRESS, 'temporal:7233');
  });

  it('runs Temporal on PostgreSQL after the schema step has finished', () => {
    const e = env('temporal');
    assert.equal(e.DB, 'postgres12');
    assert.equal(e.POSTGRES_SEEDS, 'postgresql');
    assert.equal(services.temporal!.depends_on?.['temporal-schema']?.condition, 'service_completed_successfully');
    const s = script('temporal-schema');
    assert.match(s, /temporal-sql-tool --plugin postgres12/);
    for (const db of ['temporal', 'temporal_visibility']) assert.match(s, new RegExp(`setup ${db} `));
    assert.match(s, /update-schema/);
  });

  it('registers the namespace and the four search attributes before Maestro starts', () => {
    const s = script('temporal-setup');
    for (const attr of Object.values(SEARCH_ATTRIBUTES)) assert.ok(s.includes(attr), `${attr} is not registered`);
    assert.match(s, /search-attribute create/);
    assert.match(s, /namespace create/);
    for (const m of MAESTRO) {
      assert.equal(services[m]!.depends_on?.['temporal-setup']?.condition, 'service_completed_successfully', m);
    }
  });

  it('gives the setup scripts valid sh syntax', () => {
    for (const name of ['temporal-schema', 'temporal-setup']) {
      assert.deepEqual(services[name]!.entrypoint, ['/bin/sh', '-c']);
      const r = spawnSync('sh', ['-n'], { input: script(name), encoding: 'utf8' });
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    }
  });

  it('sets only environment variables that config.ts reads on the maestro services', () => {
    for (const m of MAESTRO) {
      const keys = Object.keys(env(m));
      assert.ok(keys.length > 0, `${m} has no environment`);
      for (const k of keys) assert.ok(ENV_KEYS.includes(k), `${m}: ${k} is not read by config/config.ts`);
    }
    for (const k of ['MAESTRO_LLM_BASE_URL', 'MAESTRO_LLM_API_KEY', 'MAESTRO_LLM_MODEL', 'MAESTRO_CONTEXT_WINDOW']) {
      assert.ok(k in env('maestro-worker'), `the worker needs ${k}`);
    }
  });

  it('points the maestro services at the compose Temporal and PostgreSQL', () => {
    const pgEnv = env('postgresql');
    for (const m of MAESTRO) {
      const e = env(m);
      assert.equal(e.TEMPORAL_ADDRESS, 'temporal:7233', m);
      const url = new URL(e.DATABASE_URL!.replace(/\$\{[^}]*\}/g, 'x'));
      assert.equal(url.protocol, 'postgres:');
      assert.equal(url.hostname, 'postgresql', m);
      assert.equal(url.port, '5432', m);
      assert.equal(url.username, pgEnv.POSTGRES_USER, m);
      assert.equal(url.pathname, `/${pgEnv.POSTGRES_DB}`, m);
      assert.equal(e.MAESTRO_HOME, '/data/maestro', m);
    }
    assert.deepEqual(services['maestro-worker']!.command, ['node', 'bin/maestro.js', 'worker']);
    assert.deepEqual(services['maestro-api']!.command, ['node', 'bin/maestro.js', 'api']);
  });

  it('makes the API listen publicly only with a required token', () => {
    const e = env('maestro-api');
    assert.equal(e.MAESTRO_API_HOST, '0.0.0.0');
    assert.equal(e.MAESTRO_API_PORT, '8787');
    assert.match(e.MAESTRO_API_TOKEN!, /^\$\{MAESTRO_API_TOKEN:\?.+\}$/);
  });

  it('gives the worker the seccomp profile bubblewrap needs, no capabilities and no privilege gain', () => {
    const opts = services['maestro-worker']!.security_opt ?? [];
    assert.ok(opts.includes('seccomp=./infra/docker/worker-seccomp.json'), `security_opt: ${opts.join(', ')}`);
    assert.ok(opts.includes('no-new-privileges:true'));
    assert.ok(!opts.includes('seccomp=unconfined'), 'seccomp stays on');
    assert.deepEqual(services['maestro-worker']!.cap_drop, ['ALL']);
    assert.ok(!('privileged' in services['maestro-worker']!), 'never privileged');

    // The shipped profile is exactly Docker's default plus the bubblewrap rule (see infra/docker/NOTICE.md).
    const shipped = readFileSync(`${root}infra/docker/worker-seccomp.json`, 'utf8');
    assert.equal(shipped, renderWorkerSeccomp(), 'run: node --import tsx infra/docker/derive-worker-seccomp.ts');
    const profile = JSON.parse(shipped) as { defaultAction: string; syscalls: Array<{ names: string[]; action: string; args?: unknown[]; includes?: object }> };
    assert.equal(profile.defaultAction, 'SCMP_ACT_ERRNO');
    const unconditional = new Set(
      profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args?.length && !Object.keys(r.includes ?? {}).length).flatMap((r) => r.names),
    );
    for (const name of BWRAP_SYSCALLS) assert.ok(unconditional.has(name), `${name} is allowed`);
    for (const name of ['kexec_load', 'init_module', 'bpf', 'perf_event_open', 'open_by_handle_at', 'reboot']) {
      assert.ok(!unconditional.has(name), `${name} stays blocked`);
    }
    assert.ok(existsSync(`${root}infra/docker/LICENSE.moby-profiles`), 'the upstream license ships with it');
  });

  it('runs the image as a non-root user with bubblewrap, slirp4netns, ripgrep and git from Debian', () => {
    const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]!);
    assert.ok(users.length > 0, 'the Dockerfile sets USER');
    assert.ok(!['root', '0', '0:0', 'root:root'].includes(users.at(-1)!), `the last USER is ${users.at(-1)}`);
    const install = /apt-get install[^\n]*(?:\\\n[^\n]*)*/.exec(dockerfile)?.[0] ?? '';
    for (const pkg of ['bubblewrap', 'slirp4netns', 'ripgrep', 'git']) assert.match(install, new RegExp(`\\b${pkg}\\b`), `installs ${pkg}`);
  });

  it('builds the maestro image from the Dockerfile on node 20 slim with npm ci', () => {
    for (const m of MAESTRO) assert.equal(services[m]!.build, '.');
    const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');
    assert.match(dockerfile, /^FROM node:20\.\d+\.\d+-slim$/m);
    assert.match(dockerfile, /^RUN npm ci\b/m);
    assert.match(readFileSync(`${root}.dockerignore`, 'utf8'), /^node_modules$/m);
  });
});
