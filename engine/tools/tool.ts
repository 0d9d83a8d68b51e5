// The contract every tool file implements: one zod schema, one run function.
// Tool failures are returned as error results (the model can act on them), never thrown past the loop.
import type { z } from 'zod';
import type { Workspace } from './workspace.js';

export interface ToolContext {
  jobId: string;
  workspace: Workspace;
  /** Aborted when the activity is cancelled or times out: long tools (Bash) must stop. */
  signal: AbortSignal;
  /** Most tokens one tool result may take (issue 3 computes it from the ContextManager). */
  budgetTokens: number;
}

export interface ToolOutput {
  content: string;
  isError?: boolean;
  /** True when the output was cut to fit budgetTokens; the content then carries a visible notice. */
  truncated?: boolean;
  /** Images for vision models (ReadImage): the loop adds them to the movement's messages. */
  images?: ToolImage[];
}

export interface ToolImage {
  mimeType: string;
  base64: string;
  /** Where it came from, shown to the model next to the image. */
  label: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Helper so each tool file keeps its argument type inferred from its schema. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}
