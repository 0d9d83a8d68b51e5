// The piece-wide transition tool (invariant: byte-stable prompt prefix): ONE tool for the
// whole job whose enum is the union of every movement's targets and whose description is static.
// Per-movement limits are checked at call time; an invalid choice gets an error listing the valid ones.
import { z } from 'zod';
import type { ChatTool } from '../llm-client.js';
import { lessonsArg, parseToolArgs } from './tool-args.js';
import type { ControlToolName } from './tool-traits.js';

export const TRANSITION_TOOL = 'transition' satisfies ControlToolName;

const argsSchema = z.object({
  next: z.string().min(1),
  summary: z.string().default(''),
  lessons: lessonsArg,
});
export type TransitionArgs = z.output<typeof argsSchema>;

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

export type TransitionCheck = { ok: true; args: TransitionArgs } | { ok: false; error: string };

/** Parsed like every tool call; the movement's own targets are checked here, at call time. */
export function checkTransition(rawArgs: string, movement: string, allowed: string[]): TransitionCheck {
  const parsed = parseToolArgs(TRANSITION_TOOL, argsSchema, rawArgs);
  const choices = allowed.length ? allowed.map((a) => `"${a}"`).join(', ') : '(none: call `complete` instead)';
  if (!parsed.ok) return { ok: false, error: `${parsed.error}\nValid choices for next: ${choices}.` };
  if (!allowed.includes(parsed.args.next)) {
    return {
      ok: false,
      error: `"${parsed.args.next}" is not a valid next step from "${movement}". Valid choices: ${choices}.`,
    };
  }
  return parsed;
}
