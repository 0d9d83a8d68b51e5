// The one rule for a workspace someone other than the operator names (an API caller, or a job's
// SpinOffTask toward another folder): it must lie strictly inside one of MAESTRO_WORKSPACE_ROOTS,
// judged after symlinks. Checked before anything is created, so a refused path leaves no trace.
import path from 'node:path';
import { homePaths, type MaestroConfig } from './config.js';
import { DanglingLinkError, isInsideOrEqual, isStrictlyInside, pathSyntaxProblem, realpathOfDeepest } from './path-roots.js';

export class WorkspaceRootError extends Error {
  override name = 'WorkspaceRootError';
  constructor(
    readonly requested: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`workspace "${printable(requested)}" ${reason}`, options);
  }
}

function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}

/**
 * The absolute, symlink-free folder for `requested`, or WorkspaceRootError. A relative path is taken
 * inside the first root. The root itself is refused (a job would share it with every other job).
 */
export async function resolveWorkspaceInRoots(
  requested: string,
  roots: readonly string[],
  /** MAESTRO_HOME: its state (database, token, Temporal files) is never a workspace, whatever the roots say. */
  home?: { dir: string; workspaces: string },
): Promise<string> {
  if (typeof requested !== 'string' || requested.trim() === '') throw new WorkspaceRootError(String(requested), 'is empty');
  const problem = pathSyntaxProblem(requested);
  if (problem) throw new WorkspaceRootError(requested, problem);
  if (roots.length === 0) throw new WorkspaceRootError(requested, 'cannot be used: no workspace roots are configured (MAESTRO_WORKSPACE_ROOTS)');
  const abs = path.resolve(roots[0]!, requested);
  let real: string;
  let realRoots: string[];
  try {
    real = await realpathOfDeepest(abs);
    realRoots = await Promise.all(roots.map((r) => realpathOfDeepest(path.resolve(r))));
  } catch (err) {
    const why = err instanceof DanglingLinkError ? 'leads through a symlink that points nowhere' : `cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    throw new WorkspaceRootError(requested, why, { cause: err });
  }
  for (const root of realRoots) {
    if (real === root) throw new WorkspaceRootError(requested, `is a workspace root itself (${root}); name a folder inside it`);
  }
  if (!realRoots.some((root) => isStrictlyInside(root, real))) {
    throw new WorkspaceRootError(requested, `is not inside a workspace root (MAESTRO_WORKSPACE_ROOTS: ${roots.join(path.delimiter)})`);
  }
  if (home) {
    const [realHome, realWorkspaces] = await Promise.all([realpathOfDeepest(home.dir), realpathOfDeepest(home.workspaces)]);
    if (isInsideOrEqual(real, realHome) || (isInsideOrEqual(realHome, real) && !isStrictlyInside(realWorkspaces, real))) {
      throw new WorkspaceRootError(requested, `overlaps Maestro's own state in ${realHome}; name a folder under ${realWorkspaces} or another root`);
    }
  }
  return real;
}

/**
 * The roots rule with this configuration's roots and MAESTRO_HOME, for a workspace someone named.
 * `relativeTo` (a parent job's workspace) is what a relative path means to a job's own tools;
 * without it, a relative path is taken inside the first root, as for an API caller.
 */
export function resolveRequestedWorkspace(config: Pick<MaestroConfig, 'home' | 'workspaceRoots'>, requested: string, relativeTo?: string): Promise<string> {
  const abs = relativeTo === undefined ? requested : path.resolve(relativeTo, requested);
  return resolveWorkspaceInRoots(abs, config.workspaceRoots, { dir: config.home, workspaces: homePaths(config.home).workspaces });
}

/** The workspace root `dir` (a path resolveWorkspaceInRoots returned) lies in, by its real path. */
export async function rootContaining(dir: string, roots: readonly string[]): Promise<string> {
  for (const r of roots) {
    const real = await realpathOfDeepest(path.resolve(r));
    if (isStrictlyInside(real, dir)) return real;
  }
  throw new WorkspaceRootError(dir, 'is not inside a workspace root');
}
