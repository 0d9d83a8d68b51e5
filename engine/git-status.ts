// The workspace's change status for movements marked include_git_status (seeds: after a verify step,
// a git status and a diff excerpt are appended). Read-only git commands with a timeout.
import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const GIT_DIFF_MAX_CHARS = 4000;
const NOT_A_REPO = '(the workspace is not a git repository)';

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, timeout: 15_000, maxBuffer: 8 * 1024 * 1024 });
  return stdout;
}

export async function describeGitStatus(workspaceRoot: string): Promise<string> {
  try {
    // Only the workspace's own repository: a workspace that merely sits inside another checkout
    // (e.g. .maestro/ under a project) must not show that project's changes.
    const top = (await git(workspaceRoot, ['rev-parse', '--show-toplevel'])).trim();
    if (top !== (await realpath(workspaceRoot))) return NOT_A_REPO;
  } catch {
    return NOT_A_REPO;
  }
  const status = (await git(workspaceRoot, ['status', '--short'])).trimEnd() || '(no changes)';
  const stat = (await git(workspaceRoot, ['diff', '--stat'])).trimEnd();
  let diff = await git(workspaceRoot, ['diff', '--no-color']);
  if (diff.length > GIT_DIFF_MAX_CHARS) {
    diff = `${diff.slice(0, GIT_DIFF_MAX_CHARS)}\n[diff cut at ${GIT_DIFF_MAX_CHARS} characters; run \`git diff\` with Bash for the rest]`;
  }
  return [`git status --short:\n${status}`, stat && `git diff --stat:\n${stat}`, diff && `diff excerpt:\n${diff}`]
    .filter(Boolean)
    .join('\n\n');
}
