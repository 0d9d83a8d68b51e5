import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MovementResult, Piece } from '../../core/types.js';
import { PIECE_DEFAULTS } from '../../core/piece-defaults.js';
import { MAX_ASK_LIMIT_DEFLECTIONS } from '../../core/types.js';
import { askLimitNote } from '../../workflows/ask-limit.js';
import { decideStep, mapMovementResult } from '../../workflows/map-movement-result.js';

const piece: Piece = {
  ...PIECE_DEFAULTS,
  name: 'p',
  initial_movement: 'plan',
  max_movements: 5,
  system_prompt: 's',
  movements: [
    { name: 'plan', instruction: 'i', allowed_tools: [], rules: [{ condition: 'c', next: 'build' }], default_next: 'build' },
    { name: 'build', instruction: 'i', allowed_tools: [], rules: [{ condition: 'wait', next: 'WAIT_SUBTASKS' }], default_next: 'plan' },
    { name: 'solo', instruction: 'i', allowed_tools: [], rules: [{ condition: 'wait', next: 'WAIT_SUBTASKS' }] },
  ],
};

const result = (next: string | null, extra: Partial<MovementResult> = {}): MovementResult => ({
  movementRunId: 'r',
  movement: 'build',
  next,
  summary: 's',
  iterations: 1,
  usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  ...extra,
});

describe('mapMovementResult', () => {
  test('a movement name moves on', () => {
    assert.deepEqual(mapMovementResult(result('plan'), piece, { movementCount: 1 }), { kind: 'next', movement: 'plan' });
  });
  test('max_movements reached aborts with that reason', () => {
    assert.deepEqual(mapMovementResult(result('plan'), piece, { movementCount: 5 }), {
      kind: 'done',
      status: 'aborted',
      reason: 'max_movements',
    });
  });
  test('a park at max_movements aborts instead of resuming a movement over the limit', () => {
    assert.deepEqual(mapMovementResult(result('ASK'), piece, { movementCount: 5 }), {
      kind: 'done',
      status: 'aborted',
      reason: 'max_movements',
    });
    assert.equal(mapMovementResult(result('ASK'), piece, { movementCount: 4 }).kind, 'park');
  });
  test('an unknown movement fails', () => {
    const d = mapMovementResult(result('nowhere'), piece, { movementCount: 1 });
    assert.equal(d.kind, 'done');
    assert.equal(d.kind === 'done' && d.status, 'failed');
  });
  test('COMPLETE completes, even at max_movements', () => {
    assert.deepEqual(mapMovementResult(result('COMPLETE'), piece, { movementCount: 5 }), { kind: 'done', status: 'completed' });
  });
  test('ABORT aborts with the reason given', () => {
    assert.deepEqual(mapMovementResult(result('ABORT', { reason: 'text_only_limit' }), piece, { movementCount: 1 }), {
      kind: 'done',
      status: 'aborted',
      reason: 'text_only_limit',
    });
  });
  test('null is an error', () => {
    const d = mapMovementResult(result(null), piece, { movementCount: 1 });
    assert.equal(d.kind === 'done' && d.status, 'failed');
  });
  test('ASK parks waiting_human on the current movement', () => {
    assert.deepEqual(mapMovementResult(result('ASK'), piece, { movementCount: 1 }), {
      kind: 'park',
      status: 'waiting_human',
      waitReason: 'question',
      resumeMovement: 'build',
    });
  });
  for (const [sentinel, reason] of [
    ['WAITING_HUMAN_TOOL_REQUEST', 'tool_request'],
    ['WAITING_HUMAN_SPAWN_REQUEST', 'spawn_request'],
    ['WAITING_HUMAN_BROWSER', 'browser_login'],
  ] as const) {
    test(`${sentinel} parks waiting_human with waitReason ${reason}`, () => {
      assert.deepEqual(mapMovementResult(result(sentinel), piece, { movementCount: 1 }), {
        kind: 'park',
        status: 'waiting_human',
        waitReason: reason,
        resumeMovement: 'build',
      });
    });
  }
  test('WAITING_HUMAN_BROWSER keeps a captcha waitReason', () => {
    const d = mapMovementResult(result('WAITING_HUMAN_BROWSER', { waitReason: 'captcha' }), piece, { movementCount: 1 });
    assert.equal(d.kind === 'park' && d.waitReason, 'captcha');
  });
  test('WAIT_SUBTASKS from a rule resumes at default_next', () => {
    assert.deepEqual(mapMovementResult(result('WAIT_SUBTASKS'), piece, { movementCount: 1 }), {
      kind: 'park',
      status: 'waiting_subtasks',
      waitReason: 'subtasks',
      resumeMovement: 'plan',
    });
  });
  test('WAIT_SUBTASKS from the tool resumes the movement it names', () => {
    const d = mapMovementResult(result('WAIT_SUBTASKS', { resumeMovement: 'build' }), piece, { movementCount: 1 });
    assert.equal(d.kind === 'park' && d.resumeMovement, 'build');
  });
  test('WAIT_SUBTASKS with nowhere to resume fails', () => {
    const d = mapMovementResult(result('WAIT_SUBTASKS', { movement: 'solo' }), piece, { movementCount: 1 });
    assert.equal(d.kind === 'done' && d.status, 'failed');
  });
});

describe('decideStep: the ask limit', () => {
  const ask = result('ASK');
  const at = (asks: number, askDeflections = 0, movementCount = 1) => decideStep(ask, piece, { movementCount, asks, askDeflections });

  test('a question within max_asks parks and counts', () => {
    assert.equal(piece.max_asks, 3);
    assert.deepEqual(at(2), {
      decision: { kind: 'park', status: 'waiting_human', waitReason: 'question', resumeMovement: 'build' },
      counters: { asks: 3, askDeflections: 0 },
    });
  });
  test('a question over max_asks runs the movement again with the note', () => {
    assert.deepEqual(at(3), { decision: { kind: 'again', note: askLimitNote(3) }, counters: { asks: 4, askDeflections: 1 } });
    assert.deepEqual(at(4, 1), { decision: { kind: 'again', note: askLimitNote(3) }, counters: { asks: 5, askDeflections: 2 } });
  });
  test('after MAX_ASK_LIMIT_DEFLECTIONS the next question aborts ask_limit_reached', () => {
    assert.deepEqual(at(5, MAX_ASK_LIMIT_DEFLECTIONS), {
      decision: { kind: 'done', status: 'aborted', reason: 'ask_limit_reached' },
      counters: { asks: 6, askDeflections: MAX_ASK_LIMIT_DEFLECTIONS },
    });
  });
  test('max_asks 0 deflects the first question', () => {
    const d = decideStep(ask, { ...piece, max_asks: 0 }, { movementCount: 1, asks: 0, askDeflections: 0 });
    assert.deepEqual(d, { decision: { kind: 'again', note: askLimitNote(0) }, counters: { asks: 1, askDeflections: 1 } });
  });
  test('max_movements comes first: a question at the limit aborts without counting', () => {
    assert.deepEqual(at(0, 0, 5), { decision: { kind: 'done', status: 'aborted', reason: 'max_movements' }, counters: { asks: 0, askDeflections: 0 } });
  });
  test('other parks and moves leave the counters alone', () => {
    const state = { movementCount: 1, asks: 7, askDeflections: 1 };
    assert.deepEqual(decideStep(result('WAITING_HUMAN_TOOL_REQUEST'), piece, state).counters, { asks: 7, askDeflections: 1 });
    assert.deepEqual(decideStep(result('plan'), piece, state), { decision: { kind: 'next', movement: 'plan' }, counters: { asks: 7, askDeflections: 1 } });
  });
});
