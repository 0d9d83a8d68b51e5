// Fits tool output into a token budget. Pure functions: no I/O, deterministic.

/**
 * Rough characters per token for English text and code with common BPE tokenizers. An estimate
 * (we do not ship a tokenizer): it errs a little high for code, which keeps results under budget.
 */
export const CHARS_PER_TOKEN = 4;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Most characters a result may take for a budget in tokens. */
export function budgetChars(budgetTokens: number): number {
  return Math.max(0, Math.floor(budgetTokens) * CHARS_PER_TOKEN);
}

/** Largest cut <= `at` that does not split a UTF-16 surrogate pair. */
export function safeCut(text: string, at: number): number {
  const cut = Math.max(0, Math.min(at, text.length));
  if (cut > 0 && cut < text.length) {
    const c = text.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) return cut - 1;
  }
  return cut;
}

/** Where to cut the head: at the last newline when that keeps at least half, else at a character. */
function headCut(text: string, max: number): number {
  const cut = safeCut(text, max);
  const nl = text.lastIndexOf('\n', cut - 1);
  return nl + 1 >= cut / 2 && nl >= 0 ? nl + 1 : cut;
}

/** Where the tail starts: just after a newline when that keeps at least half, else at a character. */
function tailStart(text: string, max: number): number {
  let start = Math.max(0, text.length - max);
  const c = text.charCodeAt(start);
  if (start > 0 && c >= 0xdc00 && c <= 0xdfff) start += 1;
  const nl = text.indexOf('\n', start);
  return nl >= 0 && text.length - (nl + 1) >= (text.length - start) / 2 ? nl + 1 : start;
}

function notice(shown: number, total: number, mode: 'head' | 'head-tail', hint: string): string {
  const where = mode === 'head' ? 'the beginning' : 'the beginning and the end';
  return `\n[output truncated to fit the context budget: showing ${where}, ${shown} of ${total} characters. ${hint}]\n`;
}

/**
 * Cuts `text` to at most budgetTokens * CHARS_PER_TOKEN characters, notice included.
 * 'head' keeps the start; 'head-tail' keeps both ends (command output: errors are often at the end).
 */
export function truncateText(
  text: string,
  budgetTokens: number,
  opts: { mode: 'head' | 'head-tail'; hint: string },
): { text: string; truncated: boolean } {
  const max = budgetChars(budgetTokens);
  if (text.length <= max) return { text, truncated: false };
  // The notice's numbers are at most text.length, so this bounds its final length.
  const room = max - notice(text.length, text.length, opts.mode, opts.hint).length;
  if (room <= 0) {
    // Budget too small for any content: the notice alone (cut) still tells the model what happened.
    return { text: notice(0, text.length, opts.mode, opts.hint).slice(0, max), truncated: true };
  }
  if (opts.mode === 'head') {
    const head = text.slice(0, headCut(text, room));
    return { text: head + notice(head.length, text.length, 'head', opts.hint), truncated: true };
  }
  const headRoom = Math.ceil(room / 2);
  const head = text.slice(0, headCut(text, headRoom));
  const tail = text.slice(tailStart(text, room - head.length));
  const shown = head.length + tail.length;
  return { text: head + notice(shown, text.length, 'head-tail', opts.hint) + tail, truncated: true };
}

/**
 * How many whole lines fit in `maxChars` when joined with '\n'. When not even the first line fits,
 * `partialChars` says how many of its characters do (surrogate-safe), so a reader can cut inside it.
 */
export function truncateLines(lines: readonly string[], maxChars: number): { count: number; partialChars: number | null } {
  let used = 0;
  let count = 0;
  for (const line of lines) {
    const cost = line.length + (count > 0 ? 1 : 0);
    if (used + cost > maxChars) break;
    used += cost;
    count += 1;
  }
  if (count === 0 && lines.length > 0) return { count: 0, partialChars: safeCut(lines[0], Math.max(0, maxChars)) };
  return { count, partialChars: null };
}
