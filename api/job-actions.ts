// What the API does beyond validation: submitting jobs and delivering comments.
// Order matters in both: Postgres first, then Temporal, so nothing is lost when Temporal is slow or down.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { replySignal } from '../core/job-workflow-contract.js';
import type { MaestroConfig } from '../config/config.js';
import type { JobView, Piece } from '../core/types.js';
import { TERMINAL_STATUSES } from '../core/types.js';
import { MaestroPiece, MaestroStatus } from '../core/search-attributes.js';
import type { Db } from '../db/database.js';
import type { CommentView } from '../db/repositories/index.js';
import { addComment, addEvent, getJob, updateJobState } from '../db/repositories/index.js';
import { parsePiece, resolvePiece } from '../engine/piece/piece-loader.js';
import type { JobWorkflowInput } from '../core/job-workflow-contract.js';
import { WorkspacePrepareError } from '../engine/tools/workspace-create.js';
import { createJobRecord, type CreatedJob } from '../activities/job-creation.js';
import { ApiError, InvalidRequestError, NotFoundError, WorkflowStartError } from './errors.js';

/** Comments a person may add to one job; past it the job is being flooded, not talked to. */
export const MAX_USER_COMMENTS_PER_JOB = 1000;

export interface JobServiceDeps {
  db: Db;
  client: Client;
  config: MaestroConfig;
  /** How long one Temporal call from a request may take (the client retries until then). Default 10 s. */
  temporalTimeoutMs?: number;
}

export interface SubmitJobInput {
  /** A built-in piece name or a path to a YAML file. */
  piece: string | undefined;
  pieceYaml?: string;
  instruction: string;
  workspace?: string;
  parentId?: string;
}

const TEMPORAL_CALL_MS = 10_000;

async function loadRequestedPiece(input: SubmitJobInput, piecesDirs: readonly string[]): Promise<Piece> {
  if (input.pieceYaml !== undefined && input.piece !== undefined) {
    throw new InvalidRequestError('piece: give exactly one of piece or pieceYaml');
  }
  if (input.pieceYaml !== undefined) return parsePiece(input.pieceYaml, 'pieceYaml');
  if (input.piece === undefined || input.piece.trim() === '') {
    throw new InvalidRequestError('piece: give a built-in piece name, a path, or pieceYaml');
  }
  // Only YAML files: the loader quotes what it read in its errors, so any other file would leak.
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(input.piece) && !/\.ya?ml$/i.test(input.piece)) {
    throw new InvalidRequestError('piece: give a built-in piece name or the path of a .yaml/.yml file');
  }
  return (await resolvePiece(input.piece, { piecesDirs })).piece;
}

export async function submitJob(deps: JobServiceDeps, input: SubmitJobInput): Promise<JobView> {
  const { db, client, config } = deps;
  if (!input.instruction || input.instruction.trim() === '') {
    throw new InvalidRequestError('instruction: must not be empty');
  }
  const piece = await loadRequestedPiece(input, config.piecesDirs);

  if (input.parentId !== undefined && !(await getJob(db, input.parentId))) {
    throw new InvalidRequestError(`parentId: no job ${input.parentId}`);
  }

  let created: CreatedJob;
  try {
    created = await createJobRecord(db, config, { parentId: input.parentId ?? null, piece, instruction: input.instruction, workspace: input.workspace });
  } catch (err) {
    if (!(err instanceof WorkspacePrepareError)) throw err;
    throw new ApiError(400, 'invalid_workspace', `workspace: cannot prepare ${err.dir}: ${err.message}`, undefined, { cause: err.cause });
  }
  const { job, pieceHash } = created;
  const id = job.id;

  // A job the API submits is started here; a spawned subtask is started by its parent workflow.
  try {
    await client.withDeadline(Date.now() + (deps.temporalTimeoutMs ?? TEMPORAL_CALL_MS), () =>
      client.workflow.start('jobWorkflow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: job.workflowId,
        // Ids only: the worker runs the piece stored in the row above, once the hash matches it.
        args: [{ jobId: id, pieceHash, options: { heartbeatTimeoutSeconds: config.heartbeatTimeoutSeconds } } satisfies JobWorkflowInput],
        typedSearchAttributes: [
          { key: MaestroStatus, value: 'queued' },
          { key: MaestroPiece, value: piece.name },
        ],
      }),
    );
  } catch (err) {
    // The row exists already: record why it never ran instead of leaving a "queued" job forever.
    const why = describeTemporalError(err);
    const reason = `could not start the workflow: ${why}`;
    await updateJobState(db, id, { status: 'failed', reason }).catch(() => {});
    await addEvent(db, { jobId: id, type: 'job.status', data: { status: 'failed', reason } }).catch(() => {});
    throw new WorkflowStartError(`job ${id} failed to start: ${why}`, { cause: err });
  }
  return job;
}

// The client's ServiceError says only "Failed to start Workflow"; the gRPC cause says why.
function describeTemporalError(err: unknown): string {
  const e = err as Error & { cause?: { details?: unknown; message?: unknown } };
  const detail = typeof e.cause?.details === 'string' && e.cause.details ? e.cause.details : typeof e.cause?.message === 'string' ? e.cause.message : undefined;
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}

export async function requireJob(db: Db, id: string): Promise<JobView> {
  const job = await getJob(db, id);
  if (!job) throw new NotFoundError(`no job ${id}`);
  return job;
}

/**
 * Stores a person's comment, then wakes the workflow with `reply`. A workflow that is gone or
 * busy is fine: the comment is in Postgres and the engine reads the last comments on every movement.
 */
export async function addUserComment(
  deps: JobServiceDeps,
  jobId: string,
  body: string,
): Promise<CommentView & { signalled: boolean }> {
  const job = await requireJob(deps.db, jobId);
  const { n } = await deps.db
    .selectFrom('comments')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('job_id', '=', jobId)
    .where('author', '=', 'user')
    .executeTakeFirstOrThrow();
  if (Number(n) >= MAX_USER_COMMENTS_PER_JOB) {
    throw new ApiError(409, 'too_many_comments', `job ${jobId} has ${MAX_USER_COMMENTS_PER_JOB} comments already, the most one job takes`);
  }
  const comment = await addComment(deps.db, { jobId, author: 'user', body });
  let signalled = false;
  if (!TERMINAL_STATUSES.includes(job.status)) {
    try {
      signalled = (await signalJob(deps, job, replySignal, { commentId: comment.id })) === 'sent';
    } catch (err) {
      console.warn(`[api] comment ${comment.id} stored but the reply signal to ${job.workflowId} failed: ${describeTemporalError(err)}`);
    }
  }
  return { ...comment, signalled };
}

/**
 * Wakes a job's workflow, within the API's deadline for Temporal calls. Callers store what the
 * person said first; 'gone' means the workflow has ended, which needs no wake-up. Other errors throw.
 */
export async function signalJob<Args extends unknown[]>(
  deps: JobServiceDeps,
  job: Pick<JobView, 'workflowId'>,
  signal: SignalDefinition<Args>,
  ...args: Args
): Promise<'sent' | 'gone'> {
  try {
    await deps.client.withDeadline(Date.now() + (deps.temporalTimeoutMs ?? TEMPORAL_CALL_MS), () =>
      deps.client.workflow.getHandle(job.workflowId).signal(signal, ...args),
    );
    return 'sent';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'gone';
    throw err;
  }
}
