import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ContextManager,
  TOOL_BUDGET_CAP_TOKENS,
  TOOL_BUDGET_FLOOR_TOKENS,
} from '../../engine/context-manager.js';
import { CHARS_PER_TOKEN, truncateText } from '../../engine/tools/truncate.js';

describe('ContextManager', () => {
  test('thresholds fire once each, in order, from prompt_tokens', () => {
    const cm = new ContextManager(1000);
    assert.deepEqual(cm.record({ iteration: 1, promptTokens: 690, messageChars: 0 }), []);
    assert.deepEqual(cm.record({ iteration: 2, promptTokens: 700, messageChars: 0 }), ['warn']);
    assert.deepEqual(cm.record({ iteration: 3, promptTokens: 800, messageChars: 0 }), []);
    assert.deepEqual(cm.record({ iteration: 4, promptTokens: 990, messageChars: 0 }), ['prompt', 'force_transition', 'exhausted']);
    assert.deepEqual(cm.record({ iteration: 5, promptTokens: 999, messageChars: 0 }), []);
  });

  test('per-piece thresholds replace the defaults', () => {
    const cm = new ContextManager(1000, { warn: 0.5 });
    assert.deepEqual(cm.record({ iteration: 1, promptTokens: 500, messageChars: 0 }), ['warn']);
    assert.equal(cm.thresholds.prompt, 0.85);
  });

  test('without usage, the estimate starts at the 3rd iteration', () => {
    const cm = new ContextManager(1000);
    assert.deepEqual(cm.record({ iteration: 2, promptTokens: null, messageChars: 3600 }), []);
    assert.equal(cm.usedTokens, 0);
    assert.deepEqual(cm.record({ iteration: 3, promptTokens: null, messageChars: 3600 }), ['warn', 'prompt']);
    assert.equal(cm.usedTokens, 900);
  });

  test('a snapshot restores usage and fired thresholds', () => {
    const cm = new ContextManager(1000);
    cm.record({ iteration: 1, promptTokens: 720, messageChars: 0 });
    const again = new ContextManager(1000);
    again.restore(cm.snapshot());
    assert.equal(again.usedTokens, 720);
    assert.deepEqual(again.record({ iteration: 2, promptTokens: 730, messageChars: 0 }), []);
  });

  test('tool budget: half of what is left, capped at 60,000, with a floor', () => {
    const cm = new ContextManager(1_000_000);
    assert.equal(cm.toolBudgetTokens(), TOOL_BUDGET_CAP_TOKENS);
    cm.record({ iteration: 1, promptTokens: 980_000, messageChars: 0 });
    assert.equal(cm.toolBudgetTokens(), 10_000);
    cm.record({ iteration: 2, promptTokens: 999_999, messageChars: 0 });
    assert.equal(cm.toolBudgetTokens(), TOOL_BUDGET_FLOOR_TOKENS);
  });

  test('property: a tool result never exceeds the budget, whatever the sizes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2_000, max: 2_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 400_000 }),
        fc.constantFrom('head' as const, 'head-tail' as const),
        (window, used, size, mode) => {
          const cm = new ContextManager(window);
          cm.record({ iteration: 1, promptTokens: Math.floor(window * used), messageChars: 0 });
          const budget = cm.toolBudgetTokens();
          assert.ok(budget <= TOOL_BUDGET_CAP_TOKENS && budget >= TOOL_BUDGET_FLOOR_TOKENS);
          assert.ok(budget <= Math.max(TOOL_BUDGET_FLOOR_TOKENS, cm.availableTokens() / 2));
          const text = 'line of output\n'.repeat(Math.ceil(size / 15)).slice(0, size);
          const out = truncateText(text, budget, { mode, hint: 'use grep' });
          assert.ok(out.text.length <= budget * CHARS_PER_TOKEN, `${out.text.length} > ${budget * CHARS_PER_TOKEN}`);
          assert.equal(out.truncated, text.length > budget * CHARS_PER_TOKEN);
        },
      ),
      { numRuns: 200 },
    );
  });
});
