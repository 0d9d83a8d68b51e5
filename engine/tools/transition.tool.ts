// The piece-wide transition tool (invariant: byte-stable prompt prefix): ONE tool for the
// whole job whose enum is the union of every movement's targets and whose description is static.
// Per-movement limits are checked at call time; an invalid choice gets an error listing the valid ones.
import { z } from 'zod';
import type { ChatTool } from '../llm-client.js';
import type { ControlToolName } from './tool-traits.js';

export const TRANSITION_TOOL = 'transition' satisfies ControlToolName;

const argsSchema = z.object({
  next: z.string().min(1),
  summary: z.string().default(''),
  lessons: z.union([z.array(z.string()), z.string()]).optional(),
});
export type TransitionArgs = z.infer<typeof argsSchema>;

const DESCRIPTION =
  'Finish the current step and move the job to the next one. `next` must be one of the choices the ' +
  'current step lists. Give a short `summary` of what this step did, and `lessons`: facts the later ' +
  'steps need to know (they do not see this conversation).';

export function buildTransitionTool(targets: string[]): ChatTool {
  return {
    type: 'function',
    function: {
      name: TRANSITION_TOOL,
      description: DESCRIPTION,
      parameters: {
        type: 'object',
        properties: {
          next: { type: 'string', enum: targets, description: 'The next step.' },
          summary: { type: 'string', description: 'What this step did, in a few sentences.' },
          lessons: { type: 'array', items: { type: 'string' }, description: 'Facts later steps must know.' },
        },
        required: ['next', 'summary'],
        additionalProperties: false,
      },
    },
  };
}

export type TransitionCheck =
  | { ok: true; args: TransitionArgs; lessons: string[] }
  | { ok: false; error: string };

export function checkTransition(rawArgs: string, movement: string, allowed: string[]): TransitionCheck {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawArgs || '{}');
  } catch (err) {
    return { ok: false, error: `transition arguments are not valid JSON: ${(err as Error).message}` };
  }
  const result = argsSchema.safeParse(parsed);
  const choices = allowed.length ? allowed.map((a) => `"${a}"`).join(', ') : '(none: call `complete` instead)';
  if (!result.success) {
    const fields = result.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ');
    return { ok: false, error: `invalid transition arguments (${fields}). Valid choices for next: ${choices}.` };
  }
  if (!allowed.includes(result.data.next)) {
    return {
      ok: false,
      error: `"${result.data.next}" is not a valid next step from "${movement}". Valid choices: ${choices}.`,
    };
  }
  const lessons = typeof result.data.lessons === 'string' ? [result.data.lessons] : (result.data.lessons ?? []);
  return { ok: true, args: result.data, lessons: lessons.map((l) => l.trim()).filter(Boolean) };
}
