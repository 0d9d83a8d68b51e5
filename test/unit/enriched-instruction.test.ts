import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildEnrichedInstruction, buildTimeContextBlock, COMMENT_MAX_CHARS } from '../../engine/enriched-instruction.js';
import { buildMovementPrompt } from '../../engine/movement-prompt.js';

const comments = Array.from({ length: 6 }, (_, i) => ({
  author: 'user',
  body: String.fromCharCode(65 + i).repeat(800),
  createdAt: `2026-11-30T00:0${i}:00.000Z`,
}));

describe('enrichedInstruction', () => {
  const enriched = buildEnrichedInstruction({
    now: new Date('2026-11-30T09:15:00Z'),
    instruction: 'Do the thing',
    comments,
    inputFiles: ['input/spec.md'],
    outputFiles: [],
  });

  test('6 comments of 800 characters -> the last 5, each cut to 500', () => {
    const lines = enriched.comments.split('\n');
    assert.equal(lines.length, 5);
    assert.ok(!enriched.comments.includes('A'), 'the oldest comment is dropped');
    for (const [i, line] of lines.entries()) {
      const body = line.slice(line.indexOf('): ') + 3);
      assert.equal(body.length, COMMENT_MAX_CHARS);
      assert.ok(body.startsWith(String.fromCharCode(66 + i).repeat(499)));
      assert.ok(body.endsWith('…'));
    }
  });

  test('has the time block, the listings and the instruction', () => {
    assert.equal(enriched.time, buildTimeContextBlock(new Date('2026-11-30T09:15:00Z')));
    assert.match(enriched.time, /2026-11-30T09:15:00.000Z/);
    assert.match(enriched.workspace, /input\/: \n {2}input\/spec\.md/);
    assert.match(enriched.workspace, /output\/: \(empty\)/);
    assert.equal(enriched.instruction, 'Do the thing');
  });

  test('the movement prompt runs from most to least stable', () => {
    const prompt = buildMovementPrompt({
      enriched,
      movement: { name: 'plan', instruction: 'Plan it.', allowed_tools: ['Read'], rules: [{ condition: 'ready', next: 'build' }] },
      lessons: ['use python'],
    });
    const order = ['## Task', '## Recent comments', '## Lessons', '## Workspace files', '## Current step: plan', '## Time'];
    const positions = order.map((h) => prompt.indexOf(h));
    assert.ok(positions.every((p) => p >= 0), `all sections present: ${positions}`);
    assert.deepEqual([...positions].sort((a, b) => a - b), positions);
    assert.match(prompt, /next: "build" when ready/);
  });
});
