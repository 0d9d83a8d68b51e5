// Kysely table types: the read model for the API and the store for comments, events and runs.
// The migrations in db/migrations/ create exactly these columns.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface JobsTable {
  id: string;
  parent_id: string | null;
  piece_name: string;
  /** The piece as it was submitted (JSON): the only piece the worker runs for this job. */
  piece: Json<unknown>;
  /** sha256 of the piece's canonical JSON (engine/piece/piece-hash.ts); workflows carry this, not the piece. */
  piece_hash: string;
  instruction: string;
  workspace: string;
  status: string;
  current_movement: string | null;
  wait_reason: string | null;
  resume_movement: string | null;
  reason: string | null;
  summary: string | null;
  workflow_id: string;
  movement_count: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The captcha screen (space) a job parked on captcha waits for; personal workspaces have no space id. */
  captcha_space_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Children only: identifies what was spawned, so a re-run movement never spawns it twice. */
  spawn_key: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface CommentsTable {
  id: Generated<number>;
  job_id: string;
  /** 'user' for a person, 'agent' for what the model said (questions), 'system' for the engine. */
  author: string;
  body: string;
  created_at: Timestamp;
}

export interface MovementRunsTable {
  id: string;
  job_id: string;
  movement: string;
  sequence: number;
  status: string;
  next: string | null;
  summary: string | null;
  reason: string | null;
  iterations: Generated<number>;
  llm_calls: Generated<number>;
  prompt_tokens: Generated<number>;
  completion_tokens: Generated<number>;
  total_tokens: Generated<number>;
  started_at: Timestamp;
  finished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface JobEventsTable {
  id: Generated<number>;
  job_id: string;
  movement_run_id: string | null;
  type: string;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

/** One message of a movement's conversation, append-only per run (a retried attempt resumes from its checkpoint). */
export interface MovementMessagesTable {
  movement_run_id: string;
  idx: number;
  message: Json<unknown>;
}

/** A point a retried attempt can resume from: the first message_count messages plus the loop state. */
export interface MovementCheckpointsTable {
  id: Generated<number>;
  movement_run_id: string;
  message_count: number;
  state: Json<unknown>;
  created_at: Timestamp;
}

export interface LessonsTable {
  id: Generated<number>;
  job_id: string;
  movement_run_id: string;
  idx: number;
  movement: string;
  text: string;
  created_at: Timestamp;
}

/** Findings of a verify movement, addressed to the movement it sent the job back to. */
export interface FeedbackTable {
  id: Generated<number>;
  job_id: string;
  movement_run_id: string;
  from_movement: string;
  to_movement: string;
  text: string;
  created_at: Timestamp;
}

/** A person's approval for one call: a tool, a package install, or a child in another workspace. */
export interface RequestsTable {
  id: string;
  job_id: string;
  kind: string;
  call_hash: string;
  args: Json<unknown>;
  reason: ColumnType<string, string | undefined, string>;
  movement: string;
  status: ColumnType<string, string | undefined, string>;
  note: ColumnType<string | null, string | null | undefined, string | null>;
  result: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  decided_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface Database {
  jobs: JobsTable;
  comments: CommentsTable;
  movement_runs: MovementRunsTable;
  job_events: JobEventsTable;
  movement_messages: MovementMessagesTable;
  movement_checkpoints: MovementCheckpointsTable;
  lessons: LessonsTable;
  feedback: FeedbackTable;
  requests: RequestsTable;
}

export type JobRow = Selectable<JobsTable>;
export type NewJobRow = Insertable<JobsTable>;
export type JobUpdate = Updateable<JobsTable>;
export type CommentRow = Selectable<CommentsTable>;
export type MovementRunRow = Selectable<MovementRunsTable>;
export type JobEventRow = Selectable<JobEventsTable>;
