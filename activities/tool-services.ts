// What the parking and spawning tools need from the job, backed by Postgres and Temporal. Built per
// movement run by runMovement and handed to the tools through ToolContext.services.
import { createHash, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MaestroConfig } from '../config/config.js';
import type { JobView } from '../core/types.js';
import type { Db } from '../db/database.js';
import {
  addEvent,
  createRequest,
  findChildBySpawnKey,
  findRequestForCall,
  countChildren,
  getJobPiece,
  grantedTools,
  listJobs,
  setCaptchaSpace,
  setRequestResult,
} from '../db/repositories/index.js';
import { resolveRequestedWorkspace, WorkspaceRootError } from '../config/workspace-policy.js';
import { resolvePiece } from '../engine/piece/piece-loader.js';
import type { ToolServices, SpawnInput } from '../engine/tools/tool.js';
import { SubtaskLimitError } from '../engine/tools/spin-off-task.tool.js';
import { spawnChildSignal } from '../core/job-workflow-contract.js';
import { createJobRecord } from './job-creation.js';

export interface ToolServicesDeps {
  db: Db;
  config: MaestroConfig;
  getClient: () => Promise<Client>;
  job: JobView;
  movement: string;
}

export function createToolServices(deps: ToolServicesDeps): ToolServices {
  const { db, job } = deps;
  return {
    findRequest: (kind, binding) => findRequestForCall(db, job.id, kind, binding),
    async createRequest(req) {
      const created = await createRequest(db, { id: randomUUID(), jobId: job.id, movement: deps.movement, ...req });
      await addEvent(db, { jobId: job.id, type: 'request.created', data: { requestId: created.id, kind: req.kind, args: req.args } });
      return created;
    },
    setRequestResult: (id, result) => setRequestResult(db, id, result),
    grantedTools: () => grantedTools(db, job.id),
    spawnChild: (input) => spawnChild(deps, input),
    async workspaceProblem(dir) {
      try {
        // Relative to this job's workspace, as the spawn itself resolves it.
        await resolveRequestedWorkspace(deps.config, dir, job.workspace);
        return null;
      } catch (err) {
        if (err instanceof WorkspaceRootError) return err.message;
        throw err;
      }
    },
    async listChildren() {
      const children = await listJobs(db, { parentId: job.id, limit: 500 });
      return children.reverse().map((c) => ({ id: c.id, status: c.status, summary: c.summary, instruction: c.instruction }));
    },
    setCaptchaSpace: (spaceId) => setCaptchaSpace(db, job.id, spaceId),
  };
}

/** Same instruction, piece and workspace from the same parent = the same child (invariant: re-entry is idempotent). */
export function spawnKey(input: SpawnInput): string {
  const key = JSON.stringify([input.instruction.trim(), input.piece ?? '', input.workspace ?? '']);
  return createHash('sha256').update(key).digest('hex');
}

async function spawnChild(deps: ToolServicesDeps, input: SpawnInput): Promise<{ jobId: string; created: boolean; status: string }> {
  const { db, job, config } = deps;
  const key = spawnKey(input);
  const existing = await findChildBySpawnKey(db, job.id, key);
  if (existing) return { jobId: existing.id, created: false, status: existing.status };
  // Bounded per job (MAESTRO_MAX_SUBTASKS): a model must not fan out without end.
  const started = await countChildren(db, job.id);
  if (started >= config.maxSubtasks) throw new SubtaskLimitError(config.maxSubtasks, started);

  // Without a piece named, the child runs the parent's own (frozen) piece.
  const piece = input.piece ? (await resolvePiece(input.piece, { piecesDirs: config.piecesDirs })).piece : await getJobPiece(db, job.id);
  if (!piece) throw new Error(`job ${job.id} has no piece`);
  // Its workspace by the roots rule an API caller's obeys, a relative one taken in this job's own.
  const { job: child } = await createJobRecord(db, config, {
    parentId: job.id,
    piece,
    instruction: input.instruction,
    workspace: input.workspace,
    workspaceRelativeTo: job.workspace,
    spawnKey: key,
  });
  await addEvent(db, { jobId: job.id, type: 'subtask.spawned', data: { childId: child.id, piece: piece.name, workspace: child.workspace } });
  // Only the parent workflow can start a child workflow: ask it to (the row exists first, so a
  // retried activity finds the child by its spawn key instead of making a second one).
  const client = await deps.getClient();
  // The id only: the parent checks the child is its own and the child loads its own piece.
  await client.workflow.getHandle(job.workflowId).signal(spawnChildSignal, { childJobId: child.id });
  return { jobId: child.id, created: true, status: child.status };
}
