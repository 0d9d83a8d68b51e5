import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';
import { toActivityFailure, MovementNotFoundError, WorkspaceMovedError } from '../../activities/errors.js';
import { JobPieceRefusedError } from '../../activities/job-piece.activity.js';
import { NonRetryableError } from '../../core/errors.js';
import { JobNotFoundError } from '../../db/repositories/jobs.repo.js';
import { classifyLlmError, LlmNotConfiguredError, type RetryPolicy } from '../../engine/llm-errors.js';
import { withLlmRetries } from '../../engine/llm-retry.js';

const apiError = (status: number | undefined, headers: Record<string, string> = {}) =>
  OpenAI.APIError.generate(status, { error: { message: `status ${status}` } }, undefined, new Headers(headers));
const policy: RetryPolicy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 5_000 };
const first = { attempt: 1, policy, random: () => 1 };

// Every status the loop answers, so the boundary can be held to the same answer.
const STATUSES = [300, 400, 401, 402, 403, 404, 405, 408, 409, 410, 413, 415, 422, 429, 451, 500, 502, 503, 504, 529];
const transient = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;

describe('classifyLlmError', () => {
  test('transient statuses are retried with backoff, the rest are final', () => {
    for (const status of STATUSES) {
      const verdict = classifyLlmError(apiError(status), first);
      if (transient(status)) assert.deepEqual(verdict, { kind: 'retry', status, delayMs: 100 }, `status ${status}`);
      else assert.deepEqual(verdict, { kind: 'final', status }, `status ${status}`);
    }
  });

  test('the delay is the server\'s retry-after (ms, seconds or a date) when it sends one', () => {
    assert.deepEqual(classifyLlmError(apiError(429, { 'retry-after-ms': '250' }), first), { kind: 'retry', status: 429, delayMs: 250 });
    assert.deepEqual(classifyLlmError(apiError(429, { 'retry-after': '2' }), first), { kind: 'retry', status: 429, delayMs: 2_000 });
    const now = Date.parse('2025-01-01T00:00:00Z');
    const date = apiError(503, { 'retry-after': 'Wed, 01 Jan 2025 00:00:03 GMT' });
    assert.deepEqual(classifyLlmError(date, { ...first, now }), { kind: 'retry', status: 503, delayMs: 3_000 });
  });

  test('backoff doubles per attempt up to maxDelayMs', () => {
    const delays = [1, 2, 3, 4, 5].map((attempt) => classifyLlmError(apiError(500), { attempt, policy: { ...policy, maxAttempts: 9 }, random: () => 1 }));
    assert.deepEqual(delays.map((v) => (v.kind === 'retry' ? v.delayMs : v.kind)), [100, 200, 400, 800, 1_000]);
  });

  test('transient but out of attempts, or asked to wait too long: exhausted', () => {
    assert.deepEqual(classifyLlmError(apiError(429), { attempt: 3, policy }), { kind: 'exhausted', status: 429 });
    assert.deepEqual(classifyLlmError(apiError(429, { 'retry-after': '60' }), first), { kind: 'exhausted', status: 429 });
    // The activity boundary asks after the loop had its go.
    assert.deepEqual(classifyLlmError(apiError(502)), { kind: 'exhausted', status: 502 });
  });

  test('connection errors and cut streams are transient; aborts and other errors are not the LLM layers\'', () => {
    assert.deepEqual(classifyLlmError(new OpenAI.APIConnectionTimeoutError(), first), { kind: 'retry', status: null, delayMs: 100 });
    assert.deepEqual(classifyLlmError(new OpenAI.APIConnectionError({ message: 'refused' }), first), { kind: 'retry', status: null, delayMs: 100 });
    assert.deepEqual(classifyLlmError(apiError(undefined), first), { kind: 'retry', status: null, delayMs: 100 });
    assert.deepEqual(classifyLlmError(new TypeError('terminated'), first), { kind: 'retry', status: null, delayMs: 100 });
    assert.deepEqual(classifyLlmError(new Error('socket hang up'), first), { kind: 'retry', status: null, delayMs: 100 });
    assert.deepEqual(classifyLlmError(new OpenAI.APIUserAbortError(), first), { kind: 'other' });
    assert.deepEqual(classifyLlmError(new Error('a bug of ours'), first), { kind: 'other' });
    assert.deepEqual(classifyLlmError('not even an error', first), { kind: 'other' });
  });
});

describe('the loop and the activity boundary agree', () => {
  test('a status the loop gives up on at once is non-retryable at the boundary; one it retries is retryable there', async () => {
    for (const status of STATUSES) {
      let calls = 0;
      const err = await withLlmRetries(
        async () => {
          calls += 1;
          throw apiError(status);
        },
        { policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 } },
      ).catch((e: unknown) => e);
      const failure = toActivityFailure(err);
      if (transient(status)) {
        assert.equal(calls, 2, `the loop retries ${status}`);
        assert.equal(failure, err, `Temporal retries ${status} later`);
      } else {
        assert.equal(calls, 1, `the loop gives up on ${status}`);
        assert.ok(failure instanceof ApplicationFailure && failure.nonRetryable, `${status} is final at the boundary`);
        assert.equal(failure.type, 'LlmRequestRejectedError');
        assert.match(failure.message, new RegExp(`^LLM endpoint answered ${status}: `));
        assert.equal(failure.cause, err);
      }
    }
  });

  test('an abort or an unknown error is left to Temporal\'s default', () => {
    const abort = new OpenAI.APIUserAbortError();
    assert.equal(toActivityFailure(abort), abort);
    const bug = new Error('a bug of ours');
    assert.equal(toActivityFailure(bug), bug);
  });
});

describe('NonRetryableError marks final errors for the boundary', () => {
  test('every error declared final becomes a non-retryable failure of its own type', () => {
    const finals: NonRetryableError[] = [
      new JobNotFoundError('j1'),
      new MovementNotFoundError('no movement'),
      new WorkspaceMovedError('moved'),
      new LlmNotConfiguredError('no model'),
      new JobPieceRefusedError('refused'),
    ];
    for (const err of finals) {
      const failure = toActivityFailure(err);
      assert.ok(failure instanceof ApplicationFailure && failure.nonRetryable, err.name);
      assert.equal(failure.type, err.name);
      assert.equal(failure.message, err.message);
      assert.equal(failure.cause, err);
    }
  });

  test('there is one JobNotFoundError: the repository\'s, as the API matches it by name', () => {
    const err = new JobNotFoundError('j1');
    assert.equal(err.name, 'JobNotFoundError');
    assert.equal(err.jobId, 'j1');
    assert.ok(err instanceof NonRetryableError);
  });
});
