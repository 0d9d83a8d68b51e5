// The worker's secrets stay with the worker: an LLM provider that echoes the API key it was sent
// (in its error body, with the Authorization header, URL-encoded, base64) must not get the key
// into the job row, events, comments, workflow history or the worker's console output (issue 7).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  MIN_SECRET_LENGTH,
  passwordOfUrl,
  REDACTED,
  redactDeep,
  redactError,
  redactSecrets,
  registerSecret,
} from '../../core/redact.js';
import { addComment, listComments, listEvents } from '../../db/repositories/index.js';
import type { RecordedRequest } from '../../dev/scripted-llm-server.js';
import { startTestStack, type TestStack } from '../helpers/test-stack.js';

const KEY = `sk-live-${randomBytes(16).toString('hex')}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Every way a careless provider might echo what it received. */
function echo(req: RecordedRequest): string {
  const auth = req.headers.authorization ?? '';
  const key = auth.replace(/^Bearer /, '');
  return `Incorrect API key provided: ${key}. You sent "Authorization: ${auth}" (url ${encodeURIComponent(key)}, b64 ${b64(key)})`;
}

/** Everything written by stdout/stderr (console.* included) while fn runs, passed through as well. */
async function captureOutput<T>(fn: () => Promise<T>): Promise<{ value: T; output: string }> {
  const chunks: string[] = [];
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const tee = (original: typeof process.stdout.write) =>
    function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof process.stdout.write;
  process.stdout.write = tee(originals.out);
  process.stderr.write = tee(originals.err);
  try {
    const value = await fn();
    return { value, output: chunks.join('') };
  } finally {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
  }
}

function assertNoKey(where: string, text: string): void {
  for (const variant of [KEY, encodeURIComponent(KEY), b64(KEY), b64(KEY).replace(/=+$/, '')]) {
    assert.ok(!text.includes(variant), `the API key (${variant === KEY ? 'raw' : 'encoded'}) leaked into ${where}`);
  }
}

describe('secrets never leave the worker', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack({
      env: { MAESTRO_LLM_API_KEY: KEY },
      script: (req, i) =>
        i === 0
          ? // A retryable echo first: the retry notice becomes a job event.
            { status: 429, headers: { 'retry-after-ms': '1' }, errorBody: { error: { message: echo(req), type: 'rate_limit' } } }
          : { status: 401, errorBody: { error: { message: echo(req), type: 'invalid_request_error', code: 'invalid_api_key' } } },
    });
  });
  after(async () => stack?.stop());

  it('an LLM 401 that echoes the key leaves no trace of it in the job, events, comments, history or logs', async () => {
    const { value, output } = await captureOutput(async () => {
      const job = await stack.submit({ piece: 'develop', instruction: 'a task for a model that refuses the key' });
      return stack.finish(job.id);
    });
    const { failure, job } = value;
    assert.ok(failure, 'the workflow failed');
    assert.equal(job.status, 'failed');
    assert.equal(stack.llm.requests.length, 2);
    assert.equal(stack.llm.requests[1].headers.authorization, `Bearer ${KEY}`, 'the key did reach the provider');

    // The provider's message still reaches the job, with the key cut out.
    assert.match(job.reason ?? '', /LLM endpoint answered 401: .*Incorrect API key provided: \[REDACTED\]/);
    assertNoKey('the job row', JSON.stringify(job));

    const events = await listEvents(stack.db, job.id);
    const retry = events.find((e) => e.type === 'llm.retry');
    assert.ok(retry, 'the 429 was retried and recorded');
    assert.match(String(retry.data.message), /\[REDACTED\]/);
    assertNoKey('the job events', JSON.stringify(events));
    assertNoKey('the comments', JSON.stringify(await listComments(stack.db, job.id)));

    const history = await stack.client.workflow.getHandle(job.workflowId).fetchHistory();
    const text = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
    assert.match(text, /Incorrect API key provided/, 'the failure is in history, payloads decoded for the search');
    assertNoKey('workflow history', text);

    assertNoKey("the worker's console output", output);
  });

  it("redacts what the engine writes into comments, never what a person wrote", async () => {
    const job = await stack.submit({ piece: 'develop', instruction: 'comments' });
    await stack.finish(job.id);
    await addComment(stack.db, { jobId: job.id, author: 'agent', body: `the key is ${KEY}` });
    await addComment(stack.db, { jobId: job.id, author: 'user', body: `my own text ${KEY}` });
    const bodies = (await listComments(stack.db, job.id)).map((c) => c.body);
    assert.ok(bodies.includes(`the key is ${REDACTED}`));
    assert.ok(bodies.includes(`my own text ${KEY}`));
  });
});

describe('redactSecrets', () => {
  const secret = `p@ss/w+rd:${randomBytes(8).toString('hex')}`;
  before(() => registerSecret(secret));

  it('removes a secret and its URL, JSON and base64 encodings', () => {
    for (const form of [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), b64(secret), b64(secret).replace(/=+$/, '')]) {
      assert.equal(redactSecrets(`a ${form} b`), `a ${REDACTED} b`, form);
    }
    assert.equal(redactSecrets(`Bearer ${secret}`), `Bearer ${REDACTED}`);
  });

  it('ignores values too short to be secrets, and blanks', () => {
    registerSecret('x'.repeat(MIN_SECRET_LENGTH - 1));
    registerSecret('   ');
    registerSecret(undefined);
    assert.equal(redactSecrets(`${'x'.repeat(MIN_SECRET_LENGTH - 1)} stays`), `${'x'.repeat(MIN_SECRET_LENGTH - 1)} stays`);
  });

  it('walks JSON-like data without changing the input, and scrubs errors and their causes in place', () => {
    const data = { list: [`k=${secret}`], nested: { [secret]: 1 }, n: 3 };
    assert.deepEqual(redactDeep(data), { list: [`k=${REDACTED}`], nested: { [REDACTED]: 1 }, n: 3 });
    assert.equal(data.list[0], `k=${secret}`);
    const inner = Object.assign(new Error(`inner ${secret}`), { body: { message: secret } });
    const outer = new Error(`outer ${secret}`, { cause: inner });
    redactError(outer);
    assert.equal(outer.message, `outer ${REDACTED}`);
    assert.ok(!outer.stack?.includes(secret));
    assert.equal(inner.message, `inner ${REDACTED}`);
    assert.deepEqual(inner.body, { message: REDACTED });
  });

  it("finds the password in a connection URL", () => {
    assert.equal(passwordOfUrl('postgres://maestro:s3cr%40t-pass@db:5432/maestro'), 's3cr@t-pass');
    assert.equal(passwordOfUrl('postgres://db:5432/maestro'), undefined);
    assert.equal(passwordOfUrl(undefined), undefined);
  });
});
