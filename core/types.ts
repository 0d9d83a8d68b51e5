// Pure types and constants shared by the workflow (deterministic sandbox), the activities,
// the API and the CLI. No imports with side effects: this file is bundled into workflow code.

/** Values a movement may put in MovementResult.next besides a movement name (docs/pieces.md). */
export const SENTINELS = [
  'COMPLETE',
  'ABORT',
  'ASK',
  'WAIT_SUBTASKS',
  'WAITING_HUMAN_BROWSER',
  'WAITING_HUMAN_TOOL_REQUEST',
  'WAITING_HUMAN_SPAWN_REQUEST',
] as const;
export type Sentinel = (typeof SENTINELS)[number];

/** The only sentinel a piece author may write in rules[].next. */
export const RULE_SENTINELS = ['WAIT_SUBTASKS'] as const;

export const JOB_STATUSES = [
  'queued',
  'running',
  'waiting_human',
  'waiting_subtasks',
  'completed',
  'aborted',
  'cancelled',
  'failed',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'aborted', 'cancelled', 'failed'];

export type WaitReason =
  | 'question'
  | 'tool_request'
  | 'package_request'
  | 'spawn_request'
  | 'browser_login'
  | 'captcha'
  | 'subtasks';

export interface PieceRule {
  condition: string;
  next: string;
}

export interface ContextThresholds {
  warn: number;
  prompt: number;
  force_transition: number;
  exhausted: number;
}

export interface PieceMovement {
  name: string;
  instruction: string;
  allowed_tools: string[];
  rules: PieceRule[];
  default_next?: string;
  /** A verify movement may send the job back with findings. */
  verify?: boolean;
  include_git_status?: boolean;
  /** The movement's sandboxed processes get the outside network (never the host's loopback). */
  network?: boolean;
  /** Environment variables its sandboxed processes get, on top of the allowlist. */
  env?: Record<string, string>;
  max_iterations?: number;
  text_only_limit?: number;
}

/**
 * A parsed, validated and linted piece. Frozen in the job row with its content hash; workflows and
 * movements carry the hash and load the piece by job id (the worker runs only what was submitted).
 */
export interface Piece {
  name: string;
  description?: string;
  initial_movement: string;
  max_movements: number;
  system_prompt: string;
  // Always present in a parsed piece: the schema fills them from PIECE_DEFAULTS (core/piece-defaults.ts).
  max_iterations: number;
  text_only_limit: number;
  max_asks: number;
  /** Seconds a tool/package/spawn approval may stay pending before it expires (none: no expiry). */
  approval_timeout?: number;
  context_thresholds: ContextThresholds;
  /** Environment variables every movement's sandboxed processes get (a movement's own win). */
  env?: Record<string, string>;
  movements: PieceMovement[];
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** Input of the runMovement activity: ids and small values only, big text lives in Postgres. */
export interface MovementInput {
  jobId: string;
  /** sha256 of the piece stored with the job; the activity loads that piece and checks this. */
  pieceHash?: string;
  /**
   * Only in histories recorded before piece-by-id: a copy of the piece, used as a claim (hashed and
   * compared with the stored hash), never run. New workflow code never sends it.
   */
  piece?: Piece;
  movement: string;
  /** 1-based count of movements run so far in this job, including this one. */
  sequence: number;
  /** A note from the engine for this run of the movement (e.g. the ask-limit deflection). */
  note?: string;
}

/**
 * How a movement ends, whoever decides it: a control-flow tool (transition, complete), a tool that
 * parks the job, or a guard of the agent loop. The tool's park, the dispatcher, the loop and the
 * activity all pass this one object along.
 */
export interface MovementOutcome {
  /** A movement name, a sentinel, or null when the loop ended without deciding (an error). */
  next: string | null;
  summary: string;
  /** Why the movement aborted or was forced (max_iterations, text_only_limit, context_exhausted...). */
  reason?: string;
  waitReason?: WaitReason;
  resumeMovement?: string;
  /** The pending request a WAITING_HUMAN_*_REQUEST park waits on. */
  requestId?: string;
  /** ASK's question: the activity stores it as the agent's comment, the workflow never sees it. */
  question?: string;
  /** What the model learnt; stored by the activity, not returned to the workflow. */
  lessons: string[];
}

/**
 * What one movement returns to the workflow: its outcome without what the activity already stored
 * (question, lessons), plus ids and usage (invariant: small history). Recorded histories hold this
 * shape (test/fixtures/histories/): keep it.
 */
export interface MovementResult extends Omit<MovementOutcome, 'question' | 'lessons'> {
  movementRunId: string;
  movement: string;
  iterations: number;
  usage: TokenUsage;
}

/** The job as the API and CLI show it (a projection of the jobs row). */
export interface JobView {
  id: string;
  parentId: string | null;
  piece: string;
  instruction: string;
  workspace: string;
  status: JobStatus;
  currentMovement: string | null;
  waitReason: string | null;
  resumeMovement: string | null;
  reason: string | null;
  summary: string | null;
  workflowId: string;
  movementCount: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export const SEARCH_ATTRIBUTES = {
  status: 'MaestroStatus',
  piece: 'MaestroPiece',
  movement: 'MaestroMovement',
  waitReason: 'MaestroWaitReason',
} as const;

export const REQUEST_KINDS = ['tool', 'package', 'spawn'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];
export const REQUEST_STATUSES = ['pending', 'approved', 'declined', 'expired'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export interface RequestView {
  id: string;
  jobId: string;
  kind: RequestKind;
  args: Record<string, unknown>;
  reason: string;
  movement: string;
  status: RequestStatus;
  note: string | null;
  result: string | null;
  createdAt: string;
  decidedAt: string | null;
}

/** Deflections of over-limit ASKs before the job ends aborted with reason ask_limit_reached. */
export const MAX_ASK_LIMIT_DEFLECTIONS = 2;

export function workflowIdForJob(jobId: string): string {
  return `job-${jobId}`;
}
