// The job workflow's contract: its input, result and state, and its signal and query definitions,
// shared by the workflow and everything that talks to it (activities, API, tests). Pure, so the
// workflow bundle can import it.
// Signals carry ids only: what a person wrote is stored in Postgres before the signal is sent.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { JobStatus, Piece, WaitReason } from './types.js';

/**
 * What a job workflow is started with: ids only. The piece is frozen in the job row; the workflow
 * loads it by job id and the worker checks that this workflow is the job's and that pieceHash is
 * the stored piece's (activities/job-piece.activity.ts). A forged input runs nothing.
 */
export interface JobWorkflowInput {
  jobId: string;
  /** sha256 of the canonical JSON of the piece stored with the job (engine/piece/piece-hash.ts). */
  pieceHash: string;
  /** Chosen by the submitter from its configuration. */
  options?: JobWorkflowOptions;
  /** Set when the workflow continues as new: where to pick up. */
  resume?: JobWorkflowResume;
}

export interface JobWorkflowOptions {
  heartbeatTimeoutSeconds?: number;
}

export interface JobWorkflowResume {
  movement: string;
  movementCount: number;
  asks: number;
  askDeflections: number;
}

/**
 * The input of histories recorded before piece-by-id: the piece travelled as data. Replayed as
 * recorded; in a new run the piece is only a claim, hashed by the worker and compared with the
 * stored hash, and the stored piece is what runs.
 */
export interface LegacyJobWorkflowInput {
  jobId: string;
  piece: Piece;
  pieceHash?: undefined;
  options?: JobWorkflowOptions;
  resume?: JobWorkflowResume;
}

export interface JobWorkflowResult {
  status: Extract<JobStatus, 'completed' | 'aborted' | 'cancelled' | 'failed'>;
  reason?: string;
  movementCount: number;
}

export interface JobWorkflowState {
  status: JobStatus;
  movement: string | null;
  movementCount: number;
  waitReason: WaitReason | null;
  resumeMovement: string | null;
  /** The request a park waits on, when it waits on one. */
  requestId: string | null;
  asks: number;
  askDeflections: number;
  /** Child jobs started by this job and whether each has ended. */
  children: Record<string, { ended: boolean; status?: string }>;
}

/** A person commented (stored first); wakes a job parked on a question. */
export const replySignal = defineSignal<[{ commentId: number }]>('reply');
/** A request was decided (stored first); wakes the job parked on that request. */
export const decisionSignal = defineSignal<[{ requestId: string }]>('decision');
/** The person finished in the browser (login, captcha); wakes a WAITING_HUMAN_BROWSER park. */
export const browserResolvedSignal = defineSignal<[{ spaceId?: string | null }]>('browserResolved');
/**
 * From SpinOffTask (inside runMovement): start this child job (its row exists already) as a child
 * workflow. The id only: the parent checks the child is its own, the child loads its own piece.
 */
export const spawnChildSignal = defineSignal<[{ childJobId: string }]>('spawnChild');
/** The spawnChild payload of histories recorded before piece-by-id (replay only). */
export interface LegacySpawnChildPayload {
  childJobId: string;
  piece: Piece;
  options?: JobWorkflowOptions;
}
export const jobStateQuery = defineQuery<JobWorkflowState>('state');
