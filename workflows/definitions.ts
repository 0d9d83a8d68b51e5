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
  resume?: { movement: string; movementCount: number };
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
}

export const replySignal = defineSignal<[{ commentId: number }]>('reply');
export const jobStateQuery = defineQuery<JobWorkflowState>('state');
