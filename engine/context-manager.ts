// Tracks how full the model's context window is during one movement (thresholds: docs/pieces.md, context_thresholds).
// Usage comes from the endpoint's prompt_tokens when it reports them, otherwise from a character
// estimate from the 3rd iteration on. Each threshold fires at most once per movement.
import { PIECE_DEFAULTS } from '../core/piece-defaults.js';
import type { ContextThresholds } from '../core/types.js';

export const DEFAULT_THRESHOLDS: ContextThresholds = PIECE_DEFAULTS.context_thresholds;
/** Documented estimate used when the endpoint reports no usage (about 4 characters per token). */
export const CHARS_PER_TOKEN_ESTIMATE = 4;
export const TOOL_BUDGET_SHARE = 0.5;
export const TOOL_BUDGET_CAP_TOKENS = 60_000;
export const TOOL_BUDGET_FLOOR_TOKENS = 1_000;
const ESTIMATE_FROM_ITERATION = 3;

export type ThresholdAction = keyof ContextThresholds;

export interface UsageSample {
  iteration: number;
  promptTokens: number | null;
  /** Characters of the messages that were sent, for the estimate path. */
  messageChars: number;
}

export interface ContextSnapshot {
  used: number;
  fired: ThresholdAction[];
}

export class ContextManager {
  readonly thresholds: ContextThresholds;
  private used = 0;
  private readonly fired = new Set<ThresholdAction>();

  constructor(
    readonly contextWindow: number,
    thresholds: Partial<ContextThresholds> = {},
  ) {
    this.thresholds = { ...DEFAULT_THRESHOLDS, ...thresholds };
  }

  get usedTokens(): number {
    return this.used;
  }

  get ratio(): number {
    return this.used / this.contextWindow;
  }

  /** Records one LLM call's usage and returns the thresholds it crossed for the first time. */
  record(sample: UsageSample): ThresholdAction[] {
    if (sample.promptTokens !== null) this.used = sample.promptTokens;
    else if (sample.iteration >= ESTIMATE_FROM_ITERATION) this.used = Math.ceil(sample.messageChars / CHARS_PER_TOKEN_ESTIMATE);
    const crossed: ThresholdAction[] = [];
    for (const action of ['warn', 'prompt', 'force_transition', 'exhausted'] as const) {
      if (this.ratio >= this.thresholds[action] && !this.fired.has(action)) {
        this.fired.add(action);
        crossed.push(action);
      }
    }
    return crossed;
  }

  /** State to checkpoint, so a resumed movement neither re-fires nor forgets its thresholds. */
  snapshot(): ContextSnapshot {
    return { used: this.used, fired: [...this.fired] };
  }

  restore(snapshot: ContextSnapshot): void {
    this.used = snapshot.used;
    this.fired.clear();
    for (const action of snapshot.fired) this.fired.add(action);
  }

  availableTokens(): number {
    return Math.max(0, this.contextWindow - this.used);
  }

  /** Most tokens one tool result may take: half of what is left, capped, with a floor. */
  toolBudgetTokens(): number {
    const share = Math.floor(this.availableTokens() * TOOL_BUDGET_SHARE);
    return Math.max(TOOL_BUDGET_FLOOR_TOKENS, Math.min(TOOL_BUDGET_CAP_TOKENS, share));
  }
}
