// The embedded database's wire server holds up against clients that misbehave: one that leaves
// while queued, one that idles inside a transaction, one without the password. In each case the
// other clients are still served within a deadline. PGlite is one session, so any of these used to
// be able to stall every other client (issue 7).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../db/embedded-postgres.js';
import { BackendScheduler } from '../../db/pglite-backend-scheduler.js';
import { waitFor } from '../helpers/wait-for.js';

const DEADLINE_MS = 5_000;
const IDLE_TX_TIMEOUT_MS = 300;

class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/** The promise's value, or a DeadlineError if it takes longer than ms. */
async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('embedded database: misbehaving clients do not stall the others', () => {
  let server: EmbeddedPostgres;
  const clients: pg.Client[] = [];

  async function connect(url = server.url): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined); // the server may end a client on purpose; the test asserts it
    clients.push(c);
    await within(DEADLINE_MS, 'connect', c.connect());
    return c;
  }

  async function servedWithinDeadline(what: string): Promise<void> {
    const c = await connect();
    const r = await within(DEADLINE_MS, what, c.query<{ n: number }>('select count(*)::int as n from t where x = $1', [1]));
    assert.equal(typeof r.rows[0].n, 'number');
    await c.end();
  }

  before(async () => {
    server = await startEmbeddedPostgres({ idleInTransactionTimeoutMs: IDLE_TX_TIMEOUT_MS });
    const c = await connect();
    await c.query('create table t (x int)');
    await c.end();
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await server.stop();
  });

  it('drops a client that disconnects while it waits for the backend, at once', async () => {
    const holder = await connect();
    const queued = await connect();
    await holder.query('begin');
    await holder.query('insert into t values ($1)', [1]);
    // A parameterised query: extended protocol, the kind that used to keep the backend forever.
    const pending = queued.query('select $1::int as v', [7]).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    await waitFor(() => server.waiting() === 1, { timeoutMs: DEADLINE_MS, message: 'the query queued' });
    (queued as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    assert.notEqual(await pending, 'answered');
    // Dropped from the queue while the holder still holds the backend, not when it is handed on.
    await waitFor(() => server.waiting() === 0, { timeoutMs: DEADLINE_MS, message: 'the queue emptied' });
    await holder.query('commit');
    await servedWithinDeadline('a query after the queued client left');
    await holder.end();
  });

  it('rolls back and closes a client idle inside a transaction, with FATAL 25P03', async () => {
    const idle = await connect();
    const ended = new Promise<Error & { code?: string }>((resolve) => idle.on('error', resolve));
    await idle.query('begin');
    await idle.query('insert into t values ($1)', [42]);
    // The idle client holds the backend; the other is served once the limit has passed.
    const started = Date.now();
    await servedWithinDeadline('a query while another client idles in a transaction');
    assert.ok(Date.now() - started >= IDLE_TX_TIMEOUT_MS * 0.9, 'the idle client held the backend until its limit');
    const err = await within(DEADLINE_MS, 'the idle client being told', ended);
    assert.equal(err.code, '25P03');
    const check = await connect();
    const r = await check.query<{ n: number }>('select count(*)::int as n from t where x = 42');
    assert.equal(r.rows[0].n, 0, 'the idle transaction was rolled back');
    await assert.rejects(idle.query('select 1'));
    await check.end();
  });

  it('refuses a wrong password with 28P01 and still serves the others', async () => {
    const wrong = new URL(server.url);
    wrong.password = 'not-the-password-at-all';
    await assert.rejects(connect(wrong.toString()), (e: Error & { code?: string }) => e.code === '28P01');
    await servedWithinDeadline('a query after a wrong password');
  });

  it('refuses a client without the password (pg, and cleartext over a raw socket)', async () => {
    const none = new URL(server.url);
    none.password = '';
    await assert.rejects(connect(none.toString()));

    // A raw client answering the SASL request with a cleartext "password" gets an error, never
    // AuthenticationOk, and is disconnected.
    const { hostname: host, port } = new URL(server.url);
    const reply = await within(DEADLINE_MS, 'the raw client', rawCleartextAttempt(host, Number(port)));
    assert.equal(reply.authOk, false);
    assert.match(reply.error, /28P01|password authentication failed/);
    await servedWithinDeadline('a query after clients without a password');
  });

  it('does not let a client stuck in authentication hold anything', async () => {
    const { hostname: host, port } = new URL(server.url);
    const socket = net.connect({ host, port: Number(port) });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(startupMessage());
    try {
      await servedWithinDeadline('a query while another client sits in authentication');
    } finally {
      socket.destroy();
    }
  });

  it('drops an unauthenticated client that announces a huge message, before buffering it', async () => {
    const { hostname: host, port } = new URL(server.url);
    const socket = net.connect({ host, port: Number(port) });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    // The server's FIN after its 08P01 error: it hangs up without reading the announced body.
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.once('end', () => r()));
    socket.on('error', () => undefined);
    socket.write(startupMessage());
    // A SASL response ('p') claiming almost 2 GiB, then a stream of bytes to fill it.
    const header = Buffer.alloc(5);
    header.write('p', 0);
    header.writeInt32BE(0x7ffffff0, 1);
    socket.write(header);
    for (let i = 0; i < 8 && !socket.destroyed; i++) socket.write(Buffer.alloc(1024 * 1024));
    await within(DEADLINE_MS, 'the server closing the connection', closed);
    assert.match(answer, /08P01.*invalid message length/s);
    socket.destroy();
    await servedWithinDeadline('a query after the oversized announcement');
  });
});

describe('embedded database: scheduler and password file', () => {
  it('forgets a cancelled waiter immediately, so it is never handed the backend', async () => {
    const db = await PGlite.create();
    try {
      const s = new BackendScheduler(db);
      const [a, b, c] = [{}, {}, {}];
      await s.acquire(a);
      const bWaits = s.acquire(b).then(() => 'acquired', () => 'cancelled');
      const cWaits = s.acquire(c);
      assert.equal(s.queueLength, 2);
      s.cancel(b);
      assert.equal(s.queueLength, 1);
      assert.equal(await bWaits, 'cancelled');
      s.release(a);
      await cWaits;
      assert.ok(s.isHeldBy(c));
    } finally {
      await db.close();
    }
  });

  it('generates the password once, keeps it with mode 0600, and requires it after a restart', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-pgpass-'));
    try {
      const dataDir = path.join(dir, 'pgdata');
      const first = await startEmbeddedPostgres({ dataDir });
      const password = decodeURIComponent(new URL(first.url).password);
      await first.stop();
      const file = `${dataDir}.password`;
      assert.equal((await readFile(file, 'utf8')).trim(), password);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.ok(password.length >= 24);

      const second = await startEmbeddedPostgres({ dataDir });
      try {
        assert.equal(decodeURIComponent(new URL(second.url).password), password);
        const c = new pg.Client({ connectionString: second.url });
        await c.connect();
        await c.end();
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function startupMessage(): Buffer {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  const msg = Buffer.alloc(8 + params.length);
  msg.writeInt32BE(msg.length, 0);
  msg.writeInt32BE(196608, 4);
  params.copy(msg, 8);
  return msg;
}

/** Startup, then a PasswordMessage in cleartext: what a client that skips SASL would send. */
async function rawCleartextAttempt(host: string, port: number): Promise<{ authOk: boolean; error: string }> {
  const socket = net.connect({ host, port });
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let received = Buffer.alloc(0);
  socket.on('data', (d) => {
    received = Buffer.concat([received, d]);
    if (received.length >= 9 && received[0] === 0x52 && received.readInt32BE(5) === 10) {
      const body = Buffer.from('postgres\0');
      const p = Buffer.alloc(5 + body.length);
      p[0] = 0x70;
      p.writeInt32BE(4 + body.length, 1);
      body.copy(p, 5);
      socket.write(p);
      received = Buffer.alloc(0);
    }
  });
  socket.write(startupMessage());
  await new Promise<void>((r) => socket.once('close', () => r()));
  const text = received.toString('utf8');
  const authOk = received.length >= 9 && received[0] === 0x52 && received.readInt32BE(5) === 0;
  return { authOk, error: text };
}
