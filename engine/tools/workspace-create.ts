// Creating a job's workspace folder without following a symlink anyone else can swap in on the way.
// The folder is checked against the workspace roots before it exists, and a job's Bash may own a
// folder on its path (a subtask's workspace inside its own): a plain mkdir -p would follow a link
// raced in between the check and the mkdir, and the job would be handed a folder elsewhere. Each
// level is made and opened beneath the verified descriptor of the level above (O_NOFOLLOW), and the
// result is the kernel's word for where the last descriptor lives. `allocateWorkspace` is the one
// way a job gets its workspace (the API's submit and a subtask spawn both call it).
import fs from 'node:fs/promises';
import path from 'node:path';
import { homePaths, type MaestroConfig } from '../../config/config.js';
import { resolveRequestedWorkspace, rootContaining } from '../../config/workspace-policy.js';
import { errCode, fdRealPath, isInside, O_PATH, procFd } from './safe-fs.js';
import { WORKSPACE_LAYOUT } from './workspace.js';

const DIR_FLAGS = O_PATH | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;

export class WorkspaceCreateError extends Error {
  override name = 'WorkspaceCreateError';
}

/**
 * A workspace that passed the roots rule but could not be made. It keeps the message of what went
 * wrong; `dir` is the folder that was being made, which the API names in its answer.
 */
export class WorkspacePrepareError extends Error {
  override name = 'WorkspacePrepareError';
  constructor(
    readonly dir: string,
    options: { cause: unknown },
  ) {
    super(options.cause instanceof Error ? options.cause.message : String(options.cause), options);
  }
}

async function openChild(parent: fs.FileHandle, name: string): Promise<fs.FileHandle> {
  const at = procFd(parent, name);
  try {
    await fs.mkdir(at); // never follows a link at `name`: an existing link is EEXIST
  } catch (err) {
    if (errCode(err) !== 'EEXIST') throw err;
  }
  try {
    return await fs.open(at, DIR_FLAGS);
  } catch (err) {
    const code = errCode(err);
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new WorkspaceCreateError(`${name} on the way is a symbolic link or not a folder`, { cause: err });
    throw err;
  }
}

/**
 * Makes `target` (absolute, strictly beneath `base`) and the workspace layout in it, level by level
 * beneath `base`, which is the operator's (a workspace root, or MAESTRO_HOME/workspaces) and made
 * as it is. Returns `target` once the kernel confirms that is where the folder is.
 */
export async function createWorkspaceBeneath(base: string, target: string): Promise<string> {
  const rel = path.relative(base, target);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw new WorkspaceCreateError(`${target} is not beneath ${base}`);
  await fs.mkdir(base, { recursive: true });
  const realBase = await fs.realpath(base);
  let cur = await fs.open(realBase, O_PATH | fs.constants.O_DIRECTORY);
  try {
    for (const name of rel.split(path.sep)) {
      const next = await openChild(cur, name);
      await cur.close();
      cur = next;
    }
    for (const sub of WORKSPACE_LAYOUT) await (await openChild(cur, sub)).close();
    const real = await fdRealPath(cur);
    const expected = path.join(realBase, rel);
    if (real !== expected || !isInside(realBase, real)) throw new WorkspaceCreateError(`${target} was moved while it was created (now ${real})`);
    return real;
  } finally {
    await cur.close();
  }
}

export interface WorkspaceRequest {
  jobId: string;
  /** The folder the caller named; without one, the job gets MAESTRO_HOME/workspaces/<jobId>. */
  requested?: string;
  /** What a relative `requested` is resolved against (a parent job's workspace); default the first root. */
  relativeTo?: string;
}

/**
 * Makes a job's workspace and returns its real path. A named folder must pass the roots rule
 * (WorkspaceRootError, thrown before anything exists, so a refused path leaves no folder); it is
 * then made beneath the root that holds it, the default one beneath MAESTRO_HOME/workspaces. Any
 * failure while making it is a WorkspacePrepareError.
 */
export async function allocateWorkspace(config: Pick<MaestroConfig, 'home' | 'workspaceRoots'>, req: WorkspaceRequest): Promise<string> {
  const workspaces = homePaths(config.home).workspaces;
  const dir = req.requested ? await resolveRequestedWorkspace(config, req.requested, req.relativeTo) : path.join(workspaces, req.jobId);
  try {
    // Beneath the operator's folder, never through a folder a job owns: a job's Bash could swap a
    // symlink in there between the check above and the mkdir.
    const base = req.requested ? await rootContaining(dir, config.workspaceRoots) : workspaces;
    return await createWorkspaceBeneath(base, dir);
  } catch (err) {
    throw new WorkspacePrepareError(dir, { cause: err });
  }
}
