// The one way a tool call's argument string becomes typed arguments, for file tools and control
// tools alike: JSON, then the tool's zod schema. A failure is text the model can act on (the caller
// sends it back as an error tool result), so a malformed call to any tool reads the same.
import { z } from 'zod';

export type ToolArgsCheck<T> = { ok: true; args: T } | { ok: false; error: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const field = i.path.length ? i.path.map(String).join('.') : '(arguments)';
      return `- ${field}: ${i.message}`;
    })
    .join('\n');
}

export function parseToolArgs<S extends z.ZodType>(toolName: string, schema: S, rawArgs: string): ToolArgsCheck<z.output<S>> {
  let parsed: unknown;
  try {
    // Some servers send "" for a call without arguments.
    parsed = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON: ${(err as Error).message}. Send ${toolName} a JSON object.` };
  }
  const checked = schema.safeParse(parsed);
  if (!checked.success) return { ok: false, error: `invalid arguments for ${toolName}:\n${describeIssues(checked.error)}` };
  return { ok: true, args: checked.data };
}

/** `lessons` of transition and complete: models send a list or, often enough, one string. */
export const lessonsArg = z
  .union([z.array(z.string()), z.string()])
  .optional()
  .transform((v) => (typeof v === 'string' ? [v] : (v ?? [])).map((l) => l.trim()).filter(Boolean));
