// The one way a job comes to exist, shared by the API's submit and a subtask spawn: its workspace,
// its row (queued, the piece frozen in it with its hash) and its job.submitted event. Starting the
// workflow is the caller's: the API starts it on Temporal, a spawn asks the parent workflow to,
// because only the parent can start a child workflow. Lives here, below api/, so both may import it.
import { randomUUID } from 'node:crypto';
import type { MaestroConfig } from '../config/config.js';
import { workflowIdForJob, type JobView, type Piece } from '../core/types.js';
import type { Db } from '../db/database.js';
import { addEvent, insertJob } from '../db/repositories/index.js';
import { hashPiece } from '../engine/piece/piece-hash.js';
import { allocateWorkspace } from '../engine/tools/workspace-create.js';

export interface NewJobRecord {
  parentId: string | null;
  piece: Piece;
  instruction: string;
  /** The folder the caller named; without one, MAESTRO_HOME/workspaces/<jobId>. */
  workspace?: string;
  /** What a relative `workspace` is resolved against (the parent's workspace, for a spawn). */
  workspaceRelativeTo?: string;
  /** Children only: what was spawned, so the same spawn is never made twice. */
  spawnKey?: string;
}

export interface CreatedJob {
  job: JobView;
  /** The hash of the frozen piece, which the job's workflow input carries. */
  pieceHash: string;
}

/**
 * Makes the workspace, then the row, then job.submitted. A refused workspace (WorkspaceRootError)
 * or one that cannot be made (WorkspacePrepareError) leaves no row; the row exists before anyone
 * is asked to start the workflow, so nothing is lost when Temporal is slow or down.
 */
export async function createJobRecord(db: Db, config: Pick<MaestroConfig, 'home' | 'workspaceRoots'>, req: NewJobRecord): Promise<CreatedJob> {
  const id = randomUUID();
  const workspace = await allocateWorkspace(config, { jobId: id, requested: req.workspace, relativeTo: req.workspaceRelativeTo });
  const { piece, parentId } = req;
  const job = await insertJob(db, {
    id,
    parentId,
    pieceName: piece.name,
    piece,
    instruction: req.instruction,
    workspace,
    workflowId: workflowIdForJob(id),
    spawnKey: req.spawnKey,
  });
  await addEvent(db, { jobId: id, type: 'job.submitted', data: { piece: piece.name, workspace, parentId } });
  return { job, pieceHash: hashPiece(piece) };
}
