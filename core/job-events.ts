// Every event a job's log holds, declared once: the producers (addEvent, the agent loop's emit) are
// typed by it, so a misspelt type or a missing field does not compile, and the CLI reads it. The
// data is stored as written (JSON in job_events.data) and served as is by GET /api/jobs/:id/events.
import type { ContextThresholds, JobStatus, RequestKind, Sentinel, TokenUsage, WaitReason } from './types.js';

/** The data of each event type, as the engine writes it. */
export interface JobEventDataByType {
  'job.submitted': { piece: string; workspace: string; parentId: string | null };
  /** The workflow's status projection; a job that never started records only status and reason. */
  'job.status': { status: JobStatus; movement?: string | null; waitReason?: string | null; reason: string | null };
  'movement.started': { movement: string; sequence: number; attempt: number };
  'movement.finished': { movement: string; sequence: number; next: string | null; summary: string; reason: string | null; usage: TokenUsage };
  /** A retried attempt continued from its checkpoint instead of asking the model again. */
  'movement.resumed': { checkpointId: number | null; iteration: number; messages: number };
  'llm.call': {
    iteration: number;
    durationMs: number;
    promptTokens: number | null;
    completionTokens: number | null;
    contextRatio: number;
    /** Names of the tools the model called. */
    toolCalls: string[];
  };
  /** A failed LLM request that is retried after delayMs (status null: no HTTP response). */
  'llm.retry': { attempt: number; delayMs: number; status: number | null; message: string };
  'context.threshold': { action: keyof ContextThresholds; ratio: number; usedTokens: number };
  'guard': { kind: 'text_only'; count: number; limit: number };
  'tool.call': {
    name: string;
    /** The call's arguments, shortened. */
    arguments: string;
    durationMs: number;
    isError: boolean;
    truncated: boolean;
    /** Set when the tool parked the job: the park's sentinel. */
    park?: Sentinel;
    waitReason?: WaitReason;
  };
  'transition.invalid': { arguments: string; error: string };
  'request.created': { requestId: string; kind: RequestKind; args: Record<string, unknown> };
  'request.decided': { requestId: string; status: 'approved' | 'declined'; note: string | null };
  'request.expired': { requestId: string };
  'subtask.spawned': { childId: string; piece: string; workspace: string };
}

export type JobEventType = keyof JobEventDataByType;

/** One event: its type and that type's data. */
export type JobEvent = { [T in JobEventType]: { type: T; data: JobEventDataByType[T] } }[JobEventType];

/**
 * An event as a reader gets it back: the stored JSON, not checked again, so every field may be
 * missing (a row written by an older version, a test's fake API). Readers narrow on `type`.
 */
export type StoredJobEvent = { [T in JobEventType]: { type: T; data: Partial<JobEventDataByType[T]> } }[JobEventType];

/** The loop's and dispatcher's way to write an event of the movement they run. */
export type EmitJobEvent = <T extends JobEventType>(type: T, data: JobEventDataByType[T]) => Promise<void>;

/** Pairs a type with its data as one JobEvent (TypeScript cannot correlate a generic pair by itself). */
export function jobEvent<T extends JobEventType>(type: T, data: JobEventDataByType[T]): JobEvent {
  return { type, data } as JobEvent;
}
