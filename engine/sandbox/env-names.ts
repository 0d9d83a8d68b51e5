// Which environment variable names a piece or the operator may give a sandbox. Pure (the piece
// schema uses it, and workflow code may import the schema).
/** Names a piece or the operator may never set or pass through: Maestro's own settings and secrets. */
const RESERVED = /^(MAESTRO_|DATABASE_URL$|TEMPORAL_|PG[A-Z]*$|OTEL_)/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export class SandboxEnvError extends Error {
  override name = 'SandboxEnvError';
}

/** Why `name` cannot be set in a sandbox, or null. */
export function sandboxEnvNameProblem(name: string): string | null {
  if (!NAME.test(name)) return `"${name}" is not a valid environment variable name`;
  if (RESERVED.test(name)) return `"${name}" is reserved for the worker and never reaches a sandbox`;
  return null;
}

