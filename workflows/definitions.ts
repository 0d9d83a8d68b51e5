// Signal and query definitions shared by the workflow and its callers (API, tests).
// Signals carry ids only: what a person wrote is stored in Postgres before the signal is sent.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { JobStatus, Piece, WaitReason } from '../core/types.js';

export interface JobWorkflowInput {
  jobId: string;
  piece: Piece;
  /** Chosen by the submitter from its configuration; frozen in history with the piece. */
  options?: { heartbeatTimeoutSeconds?: number };
  /** Set when the workflow continues as new: where to pick up. */
  resume?: { movement: string; movementCount: number; asks: number; askDeflections: number };
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
/** From SpinOffTask (inside runMovement): start this child job as a child workflow. */
export const spawnChildSignal = defineSignal<[{ childJobId: string; piece: Piece; options?: JobWorkflowInput['options'] }]>('spawnChild');
export const jobStateQuery = defineQuery<JobWorkflowState>('state');
