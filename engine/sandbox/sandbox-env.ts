// The environment of a sandboxed process is built from an allowlist, never copied from the worker:
// the worker's environment holds its secrets (LLM key, API token, database URL) and nothing a
// model runs may see them.
import { sandboxEnvNameProblem, SandboxEnvError } from './env-names.js';

export { sandboxEnvNameProblem, SandboxEnvError };
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface SandboxEnvInput {
  home: string;
  /** Worker variables the operator passes through by name (MAESTRO_SANDBOX_ENV). */
  passThrough?: readonly string[];
  /** Values the piece or the tool declares (after the allowlist, so they may override TERM or LANG). */
  extra?: Record<string, string>;
  workerEnv?: NodeJS.ProcessEnv;
}

export function buildSandboxEnv(input: SandboxEnvInput): Record<string, string> {
  const worker = input.workerEnv ?? process.env;
  const env: Record<string, string> = {
    PATH: SANDBOX_PATH,
    HOME: input.home,
    LANG: worker.LANG && /^[A-Za-z0-9_.@-]+$/.test(worker.LANG) ? worker.LANG : 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: '/tmp',
  };
  for (const name of input.passThrough ?? []) {
    if (sandboxEnvNameProblem(name)) continue;
    const v = worker[name];
    if (v !== undefined) env[name] = v;
  }
  for (const [name, value] of Object.entries(input.extra ?? {})) {
    const problem = sandboxEnvNameProblem(name);
    if (problem) throw new SandboxEnvError(problem);
    env[name] = value;
  }
  return env;
}
