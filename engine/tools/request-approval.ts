// The approval half shared by RequestTool and RequestPackage. A park restarts the movement from its
// first prompt, so the model WILL make the same call again (invariant: re-entry is idempotent): a decided
// request for the same call must short-circuit (declined -> told so, approved -> go on), and a
// pending one parks again on the same request, never a second one.
import type { RequestKind, RequestView, WaitReason } from '../../core/types.js';
import type { ToolServices, ToolOutput } from './tool.js';

export interface ApprovalCall {
  kind: RequestKind;
  binding: Record<string, unknown>;
  args: Record<string, unknown>;
  reason: string;
  waitReason: Extract<WaitReason, 'tool_request' | 'package_request'>;
  /** How the request reads to a person and to the model: "tool Bash", "pip package six==1.16.0". */
  what: string;
}

/** Either the approved request (the caller goes on) or the tool's output (declined, or a park). */
export type ApprovalOutcome = { approved: RequestView } | { output: ToolOutput };

export async function seekApproval(services: ToolServices, call: ApprovalCall): Promise<ApprovalOutcome> {
  const existing = await services.findRequest(call.kind, call.binding);
  if (existing?.status === 'approved') return { approved: existing };
  if (existing?.status === 'declined') {
    return {
      output: {
        content:
          `Your request for ${call.what} (request ${existing.id}) was declined${existing.note ? ` with this note: "${existing.note}"` : ' (no note)'}. ` +
          'Do not ask for it again: carry on without it, or explain in your summary what could not be done without it.',
      },
    };
  }
  if (existing?.status === 'pending') return { output: parkOn(existing, call, true) };
  // None yet, or the last one expired unanswered: ask again with a fresh request.
  const created = await services.createRequest({ kind: call.kind, binding: call.binding, args: call.args, reason: call.reason });
  return { output: parkOn(created, call, false) };
}

function parkOn(request: RequestView, call: ApprovalCall, again: boolean): ToolOutput {
  const summary = `waiting for approval of ${call.what} (request ${request.id}): ${call.reason}`.slice(0, 500);
  return {
    content:
      `${again ? 'Your request' : 'Requested'} ${call.what} (request ${request.id}) ${again ? 'is still' : 'and it is'} waiting for a person's decision. ` +
      'The job pauses now; this step starts again once it is decided.',
    park: { next: 'WAITING_HUMAN_TOOL_REQUEST', waitReason: call.waitReason, summary, requestId: request.id },
  };
}

export function noteSuffix(request: RequestView): string {
  return request.note ? ` (note: "${request.note}")` : '';
}
