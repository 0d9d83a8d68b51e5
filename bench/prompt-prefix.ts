// How much of each LLM request a prompt cache could reuse from the previous one. Requests are
// rendered as a ChatML-style chat template lays them out (system text, then tools, then the
// conversation: the order measured best for prompt-cache reuse), and compared character by character.

export interface RecordedChat {
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  tools?: unknown[];
}

export interface Segment {
  label: string;
  text: string;
}

/** The request as a template renders it, in labelled segments (so a difference can be located). */
export function renderSegments(chat: RecordedChat): Segment[] {
  const [first, ...rest] = chat.messages;
  const segments: Segment[] = [];
  const systemText = first?.role === 'system' ? String(first.content ?? '') : '';
  segments.push({ label: 'system prompt', text: `<|im_start|>system\n${systemText}` });
  segments.push({ label: 'tools', text: `\n\n# Tools\n${(chat.tools ?? []).map((t) => JSON.stringify(t)).join('\n')}<|im_end|>\n` });
  const conversation = first?.role === 'system' ? rest : chat.messages;
  conversation.forEach((m, i) => {
    const body = typeof m.content === 'string' ? m.content : m.content == null ? '' : JSON.stringify(m.content);
    const calls = m.tool_calls ? `\n<tool_call>${JSON.stringify(m.tool_calls)}</tool_call>` : '';
    const header = `<|im_start|>${m.role}\n`;
    if (i === 0 && m.role === 'user') {
      // Split the first user message by its "## " sections so a difference names the section.
      const parts = body.split(/(?=^## )/m);
      parts.forEach((p, k) => {
        const title = /^## (.+)$/m.exec(p)?.[1] ?? 'text';
        segments.push({ label: `first user message: ${title}`, text: (k === 0 ? header : '') + p });
      });
      segments.push({ label: 'first user message: end', text: '<|im_end|>\n' });
    } else {
      segments.push({ label: `message ${i + 1} (${m.role})`, text: `${header}${body}${calls}<|im_end|>\n` });
    }
  });
  return segments;
}

export function render(chat: RecordedChat): string {
  return renderSegments(chat).map((s) => s.text).join('');
}

export interface PrefixComparison {
  /** Characters shared with the previous request's rendering, from the start. */
  commonChars: number;
  totalChars: number;
  share: number;
  /** True when the previous rendering is a prefix of this one (append-only). */
  appendOnly: boolean;
  /** Label of the segment where the first difference falls (null when append-only). */
  firstDifference: string | null;
}

export function comparePrefix(previous: RecordedChat, current: RecordedChat): PrefixComparison {
  const before = render(previous);
  const segments = renderSegments(current);
  const now = segments.map((s) => s.text).join('');
  let i = 0;
  const max = Math.min(before.length, now.length);
  while (i < max && before.charCodeAt(i) === now.charCodeAt(i)) i += 1;
  const appendOnly = i === before.length;
  let firstDifference: string | null = null;
  if (!appendOnly) {
    let offset = 0;
    for (const s of segments) {
      if (i < offset + s.text.length) {
        firstDifference = s.label;
        break;
      }
      offset += s.text.length;
    }
    firstDifference ??= 'end of request';
  }
  return { commonChars: i, totalChars: now.length, share: now.length ? i / now.length : 1, appendOnly, firstDifference };
}

/** The first user message reordered the naive way (time block first). */
export function naiveOrdering(chat: RecordedChat): RecordedChat {
  const messages = chat.messages.map((m) => ({ ...m }));
  const firstUser = messages.find((m) => m.role === 'user');
  if (firstUser && typeof firstUser.content === 'string') {
    const parts = firstUser.content.split(/(?=^## )/m).map((p) => p.replace(/\n+$/, ''));
    const rank = (p: string) =>
      p.startsWith('## Time') ? 0 : p.startsWith('## Recent comments') ? 1 : p.startsWith('## Workspace files') ? 2 : p.startsWith('## Task') ? 3 : 4;
    firstUser.content = [...parts].sort((a, b) => rank(a) - rank(b)).join('\n\n');
  }
  return { ...chat, messages };
}

/** Sections of the first user message that do not change between movements of a job. */
export const JOB_LEVEL_SECTIONS = ['Task', 'Recent comments'];

/** True when a first difference falls after the system prompt, the tools and the job-level context. */
export function differenceAfterJobContext(label: string | null): boolean {
  if (label === null) return true;
  if (label === 'system prompt' || label === 'tools') return false;
  return !JOB_LEVEL_SECTIONS.some((s) => label.startsWith(`first user message: ${s}`));
}
