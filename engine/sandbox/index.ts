// The process-wide sandbox, configured once from the worker's configuration (tests configure their own).
import { loadConfig } from '../../config/config.js';
import { Sandbox, type SandboxSettings } from './sandbox.js';

export { Sandbox, SandboxNetworkRefusedError, SandboxUnavailableError, SandboxWorkspaceError } from './sandbox.js';
export type { SandboxResult, SandboxRunSpec, SandboxSettings, SandboxMode } from './sandbox.js';
export type { ResourceLimits } from './bwrap-args.js';
export { sandboxEnvNameProblem } from './env-names.js';
export { BWRAP_INSTALL_HINT, probeBwrap } from './sandbox-probe.js';

let current: Sandbox | undefined;

export function configureSandbox(settings: SandboxSettings): Sandbox {
  current = new Sandbox(settings);
  return current;
}

export function getSandbox(): Sandbox {
  current ??= new Sandbox(loadConfig().sandbox);
  return current;
}

/** The warning every start prints when tools run unsandboxed (MAESTRO_SANDBOX=none). */
export const UNSANDBOXED_WARNING =
  'WARNING: MAESTRO_SANDBOX=none: tools run unsandboxed, with the worker\'s own filesystem and network (processes get an allowlisted environment only). Use this only inside a container of your own.';
