// The workspace's change status for movements marked include_git_status (docs/pieces.md:
// a git status and a diff excerpt are appended to the prompt). git reads files the model may have written (.git/
// config, .gitattributes), so it runs in the job's sandbox with the workspace read-only, and with
// every config key that can make it run a program neutralised: hooks, fsmonitor, pagers, external
// diff, textconv and clean/smudge filter drivers.
import { getSandbox, SandboxUnavailableError, SandboxWorkspaceError } from './sandbox/index.js';

export const GIT_DIFF_MAX_CHARS = 4000;
const NOT_A_REPO = '(the workspace is not a git repository)';
const GIT_TIMEOUT_MS = 15_000;

/** Always-on overrides: `-c` beats every config file git reads. */
const SAFE_CONFIG = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.editor=true',
  'core.sshCommand=false',
  'core.askPass=',
  'core.untrackedCache=false',
  'credential.helper=',
  'diff.external=',
  'gpg.program=false',
  'protocol.allow=never',
  'submodule.recurse=false',
  'diff.ignoreSubmodules=all',
];

/** Isolated from the worker's git config: no system or global file, no prompts. */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
};

export class GitStatusError extends Error {
  override name = 'GitStatusError';
}

async function git(workspace: string, config: string[], args: string[]): Promise<{ code: number | null; out: string }> {
  const r = await getSandbox().run({
    argv: ['git', ...config.flatMap((c) => ['-c', c]), ...args],
    workspace,
    readOnlyWorkspace: true,
    env: { ...GIT_ENV, GIT_CEILING_DIRECTORIES: workspace },
    timeoutMs: GIT_TIMEOUT_MS,
    outputCapBytes: 1024 * 1024,
  });
  return { code: r.code, out: r.stdout.text() };
}

/**
 * Filter and diff drivers are named by the repository's own config; each one found gets its
 * commands emptied (`-c filter.x.clean=` etc.), which git treats as "no driver".
 */
async function driverOverrides(workspace: string): Promise<string[]> {
  const r = await git(workspace, SAFE_CONFIG, ['config', '--name-only', '--get-regexp', '^(filter|diff|merge)\\.']);
  const names = new Set<string>();
  for (const key of r.out.split('\n')) {
    const m = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver|required)$/i.exec(key.trim());
    if (m) names.add(`${m[1]}.${m[2]}`);
  }
  const out: string[] = [];
  for (const n of names) {
    if (n.startsWith('filter.')) out.push(`${n}.clean=`, `${n}.smudge=`, `${n}.process=`, `${n}.required=false`);
    else if (n.startsWith('diff.')) out.push(`${n}.textconv=`, `${n}.command=`);
    else out.push(`${n}.driver=`);
  }
  return out;
}

export async function describeGitStatus(workspaceRoot: string): Promise<string> {
  try {
    // Only the workspace's own repository; in the sandbox nothing above the workspace exists anyway.
    const top = await git(workspaceRoot, SAFE_CONFIG, ['rev-parse', '--show-toplevel']);
    if (top.code !== 0 || top.out.trim() !== workspaceRoot) return NOT_A_REPO;
    const config = [...SAFE_CONFIG, ...(await driverOverrides(workspaceRoot))];
    // Submodules are left alone: each has a config of its own that could name drivers of its own.
    const status = (await git(workspaceRoot, config, ['status', '--short', '--ignore-submodules=all'])).out.trimEnd() || '(no changes)';
    const diffArgs = ['--no-ext-diff', '--no-textconv', '--ignore-submodules=all'];
    const stat = (await git(workspaceRoot, config, ['diff', '--stat', ...diffArgs])).out.trimEnd();
    let diff = (await git(workspaceRoot, config, ['diff', '--no-color', ...diffArgs])).out;
    if (diff.length > GIT_DIFF_MAX_CHARS) {
      diff = `${diff.slice(0, GIT_DIFF_MAX_CHARS)}\n[diff cut at ${GIT_DIFF_MAX_CHARS} characters; run \`git diff\` with Bash for the rest]`;
    }
    return [`git status --short:\n${status}`, stat && `git diff --stat:\n${stat}`, diff && `diff excerpt:\n${diff}`]
      .filter(Boolean)
      .join('\n\n');
  } catch (err) {
    if (err instanceof SandboxUnavailableError || err instanceof SandboxWorkspaceError) return `(git status unavailable: ${err.message})`;
    throw new GitStatusError(`git status of the workspace failed: ${(err as Error).message}`, { cause: err });
  }
}
