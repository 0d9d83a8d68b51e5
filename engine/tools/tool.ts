// The contract every tool file implements: one zod schema, one run function.
// Tool failures are returned as error results (the model can act on them), never thrown past the loop.
import type { z } from 'zod';
import type { MovementOutcome, RequestKind, RequestView, WaitReason } from '../../core/types.js';
import type { Workspace } from './workspace.js';

export interface ToolContext {
  jobId: string;
  workspace: Workspace;
  /** Aborted when the activity is cancelled or times out: long tools (Bash) must stop. */
  signal: AbortSignal;
  /** Most tokens one tool result may take (computed from the ContextManager). */
  budgetTokens: number;
  /** The movement the call was made in. */
  movement?: string;
  /** Names of every tool this job offers (RequestTool refuses unknown ones). */
  toolNames?: readonly string[];
  /** Tools this movement allows by itself: its allowed_tools and the always-allowed ones. */
  allowedTools?: readonly string[];
  /** What tools that park or spawn need from the job (DB-backed in the worker). */
  services?: ToolServices;
  /** What the piece grants this movement's sandboxed processes (default: no network, no extra env). */
  sandbox?: SandboxGrant;
}

export interface SandboxGrant {
  network: boolean;
  env: Record<string, string>;
}

/** The sentinels a tool may end the movement with (all of them parks). */
export type ParkSentinel = 'WAITING_HUMAN_TOOL_REQUEST' | 'WAITING_HUMAN_BROWSER' | 'WAITING_HUMAN_SPAWN_REQUEST' | 'WAIT_SUBTASKS';

/**
 * How a tool ends the movement with a park (a control-flow tool raises a sentinel; invariant: park
 * ends the movement): the movement's outcome, always with a sentinel and a wait reason, never lessons.
 */
export type ToolPark = Pick<MovementOutcome, 'summary' | 'requestId' | 'resumeMovement'> & {
  next: ParkSentinel;
  waitReason: WaitReason;
};

export interface NewRequest {
  kind: RequestKind;
  /** Only what identifies the call: a decision applies to this call alone. */
  binding: Record<string, unknown>;
  args: Record<string, unknown>;
  reason: string;
}

export interface SpawnInput {
  instruction: string;
  piece?: string;
  workspace?: string;
}

export interface ToolServices {
  /** The latest request of this job for the same kind and binding, if any. */
  findRequest(kind: RequestKind, binding: Record<string, unknown>): Promise<RequestView | undefined>;
  createRequest(req: NewRequest): Promise<RequestView>;
  setRequestResult(id: string, result: string): Promise<void>;
  /** Tools approved for the rest of the job. */
  grantedTools(): Promise<string[]>;
  /** Creates the child job (once per spawn key) and has the parent workflow start it. */
  spawnChild(input: SpawnInput): Promise<{ jobId: string; created: boolean; status: string }>;
  /** Why a child may not work in `dir` (outside MAESTRO_WORKSPACE_ROOTS, Maestro's own state), or null. */
  workspaceProblem(dir: string): Promise<string | null>;
  listChildren(): Promise<Array<{ id: string; status: string; summary: string | null; instruction: string }>>;
  setCaptchaSpace(spaceId: string | null): Promise<void>;
}

export interface ToolOutput {
  content: string;
  isError?: boolean;
  /** True when the output was cut to fit budgetTokens; the content then carries a visible notice. */
  truncated?: boolean;
  /** Set by control-flow tools that park the job: the movement ends with this sentinel. */
  park?: ToolPark;
  /** Images for vision models (ReadImage): the loop adds them to the movement's messages. */
  images?: ToolImage[];
}

export interface ToolImage {
  mimeType: string;
  base64: string;
  /** Where it came from, shown to the model next to the image. */
  label: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Helper so each tool file keeps its argument type inferred from its schema. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}
