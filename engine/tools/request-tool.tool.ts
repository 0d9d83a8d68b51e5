// RequestTool: the model asks a person for a tool its movement does not allow. It parks the job
// (WAITING_HUMAN_TOOL_REQUEST, waitReason tool_request) on a request bound to that tool alone; an
// approved tool is allowed for the rest of the job (grantedTools), a declined one is not asked twice.
import { z } from 'zod';
import { noteSuffix, seekApproval } from './request-approval.js';
import { defineTool } from './tool.js';
import { ALWAYS_ALLOWED_TOOL_NAMES, BUILTIN_TOOL_NAMES, type BuiltinToolName } from './tool-traits.js';

export const REQUEST_TOOL = 'RequestTool' satisfies BuiltinToolName;

const schema = z.object({
  tool: z.string().min(1).max(100).describe('The exact name of the tool you need, e.g. "Bash".'),
  reason: z.string().min(1).max(2000).describe('What you need it for in this step; the person decides on this.'),
});

export const requestTool = defineTool({
  name: REQUEST_TOOL,
  description:
    'Ask a person for permission to use a tool that the current step does not allow. The job pauses until ' +
    'they decide, then this step starts again: call RequestTool again with the same tool to learn the ' +
    'decision. An approved tool stays allowed for the rest of the job; a declined one must be done without.',
  schema,
  async run(args, ctx) {
    const tool = args.tool.trim();
    const known: readonly string[] = ctx.toolNames ?? BUILTIN_TOOL_NAMES;
    if (!known.includes(tool)) {
      return { isError: true, content: `there is no tool "${tool}". The tools are: ${known.join(', ')}.` };
    }
    if (ALWAYS_ALLOWED_TOOL_NAMES.includes(tool) || ctx.allowedTools?.includes(tool)) {
      return { content: `${tool} is already allowed in this step: just call it.` };
    }
    if (!ctx.services) return { isError: true, content: 'approvals are not available in this run: do without the tool.' };

    const outcome = await seekApproval(ctx.services, {
      kind: 'tool',
      binding: { tool },
      args: { tool },
      reason: args.reason.trim(),
      waitReason: 'tool_request',
      what: `tool ${tool}`,
    });
    if ('output' in outcome) return outcome.output;
    return {
      content: `Your request for ${tool} (request ${outcome.approved.id}) was approved${noteSuffix(outcome.approved)}. You may now call ${tool}; it stays allowed for the rest of the job.`,
    };
  },
});
