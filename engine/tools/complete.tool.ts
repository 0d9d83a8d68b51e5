// The complete tool: ends the job (done), asks the person a question (needs_user_input -> ASK park),
// or gives up (failed -> ABORT). Available in every movement.
import { z } from 'zod';
import type { ChatTool } from '../llm-client.js';
import { lessonsArg, parseToolArgs, type ToolArgsCheck } from './tool-args.js';
import type { ControlToolName } from './tool-traits.js';

export const COMPLETE_TOOL = 'complete' satisfies ControlToolName;

const argsSchema = z
  .object({
    status: z.enum(['done', 'needs_user_input', 'failed']).default('done'),
    summary: z.string().default(''),
    question: z.string().optional(),
    lessons: lessonsArg,
  })
  .refine((a) => a.status !== 'needs_user_input' || (a.question ?? '').trim().length > 0, {
    message: 'a question is required when status is needs_user_input',
    path: ['question'],
  });
export type CompleteArgs = z.output<typeof argsSchema>;

export const completeTool: ChatTool = {
  type: 'function',
  function: {
    name: COMPLETE_TOOL,
    description:
      'End the task. status "done" when the whole task is finished; "needs_user_input" with a `question` ' +
      'when you cannot go on without the person (the job waits for their reply); "failed" when it cannot be done.',
    parameters: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['done', 'needs_user_input', 'failed'] },
        summary: { type: 'string', description: 'What was done, or why it failed.' },
        question: { type: 'string', description: 'The question for the person (needs_user_input only).' },
        lessons: { type: 'array', items: { type: 'string' } },
      },
      required: ['status', 'summary'],
      additionalProperties: false,
    },
  },
};

export function parseComplete(rawArgs: string): ToolArgsCheck<CompleteArgs> {
  return parseToolArgs(COMPLETE_TOOL, argsSchema, rawArgs);
}
