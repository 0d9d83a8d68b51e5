// The sandbox's named errors (shared by the runner and the sandbox itself).
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

export class SandboxNetworkRefusedError extends Error {
  override name = 'SandboxNetworkRefusedError';
}

/** The workspace path no longer leads to the workspace (a symlink was swapped in for it). */
export class SandboxWorkspaceError extends Error {
  override name = 'SandboxWorkspaceError';
}
