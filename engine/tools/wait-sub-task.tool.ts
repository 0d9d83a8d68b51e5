// WaitSubTask: parks the job (waiting_subtasks) until every child it started has ended, then runs
// the CURRENT movement again (the tool resumes here, a WAIT_SUBTASKS rule resumes default_next).
// Nothing waits inside the tool (invariant: park ends the movement).
import { z } from 'zod';
import { TERMINAL_STATUSES, type JobStatus } from '../../core/types.js';
import { defineTool, type ToolContext, type ToolOutput } from './tool.js';
import type { BuiltinToolName } from './tool-traits.js';

export const WAIT_SUB_TASK_TOOL = 'WaitSubTask' satisfies BuiltinToolName;

const schema = z.object({});

function describe(children: Array<{ id: string; status: string; summary: string | null }>): string {
  return children.map((c) => `- job ${c.id} [${c.status}]${c.summary ? `: ${c.summary.slice(0, 500)}` : ''}`).join('\n');
}

async function waitSubTask(_args: unknown, ctx: ToolContext): Promise<ToolOutput> {
  const services = ctx.services;
  if (!services) return { isError: true, content: 'WaitSubTask is not available here (no job services).' };
  const children = await services.listChildren();
  if (children.length === 0) return { isError: true, content: 'no subtasks to wait for: start one with SpinOffTask first.' };

  const running = children.filter((c) => !TERMINAL_STATUSES.includes(c.status as JobStatus));
  if (running.length === 0) {
    // The resumed movement calls WaitSubTask again (invariant: re-entry is idempotent): answer instead of parking, or it
    // would park and resume forever.
    return { content: `All ${children.length} subtasks have ended:\n${describe(children)}` };
  }
  const summary = `waiting for ${running.length} of ${children.length} subtasks: ${running.map((c) => c.id).join(', ')}`;
  return {
    content: `${summary}. The job waits; this step starts again when they have all ended.`,
    park: { next: 'WAIT_SUBTASKS', waitReason: 'subtasks', resumeMovement: ctx.movement, summary },
  };
}

export const waitSubTaskTool = defineTool({
  name: WAIT_SUB_TASK_TOOL,
  description:
    'Wait until every subtask started with SpinOffTask has ended. The job pauses (no work is lost) and ' +
    'this step starts again afterwards; the subtasks\' statuses and summaries are then in the prompt. ' +
    'If they have all ended already, it returns their results at once.',
  schema,
  run: waitSubTask,
});
