// The zod schema of a piece file. Its output type is core/types.ts `Piece` (checked at compile time
// below), with every default filled in so the workflow never has to guess one.
// Pure: no Node imports, so anything here may be used from workflow code.
import { z } from 'zod';
import { PIECE_DEFAULTS } from '../../core/piece-defaults.js';
import type { Piece } from '../../core/types.js';
import { sandboxEnvNameProblem } from '../sandbox/env-names.js';
import { CONTROL_TOOL_NAMES, LISTABLE_TOOL_NAMES, type ListableToolName } from '../tools/tool-traits.js';

/** Tools a movement may list in allowed_tools (the table in engine/tools/tool-traits.ts). */
export const KNOWN_TOOLS = LISTABLE_TOOL_NAMES;
export type KnownTool = ListableToolName;

/** Control-flow tools every movement has; listing them in allowed_tools is allowed but redundant. */
export const CONTROL_TOOLS = CONTROL_TOOL_NAMES;

export const MOVEMENT_NAME_RE = /^[a-z][a-z0-9_-]*$/;
/** Piece names end up in search attributes, URLs and file names: keep them to one plain word. */
export const PIECE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** The one table of defaults (core/piece-defaults.ts), re-exported for the piece loader's users. */
export { PIECE_DEFAULTS };

export const THRESHOLD_ORDER = ['warn', 'prompt', 'force_transition', 'exhausted'] as const;

const text = z.string().trim().min(1, { error: 'must not be empty' });
const positiveInt = z.number().int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' });
const fraction = z
  .number()
  .gt(0, { error: 'must be a fraction between 0 and 1 (e.g. 0.85)' })
  .lte(1, { error: 'must be a fraction between 0 and 1 (e.g. 0.85)' });

const knownToolNames: readonly string[] = KNOWN_TOOLS;
const controlToolNames: readonly string[] = CONTROL_TOOLS;

const allowedTools = z
  .array(z.string())
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      if (!knownToolNames.includes(tool) && !controlToolNames.includes(tool)) {
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `unknown tool "${tool}" in allowed_tools (known tools: ${KNOWN_TOOLS.join(', ')})`,
        });
      } else if (seen.has(tool)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `tool "${tool}" is listed twice in allowed_tools` });
      }
      seen.add(tool);
    });
  })
  // transition and complete are always offered; keeping them out of the data keeps one meaning per field.
  .transform((tools) => tools.filter((t) => !controlToolNames.includes(t)));

/** Values a piece gives its sandboxed processes; names that belong to the worker are refused. */
const sandboxEnv = z.record(z.string(), z.string().max(4096, { error: 'must be at most 4096 characters' })).superRefine((env, ctx) => {
  for (const name of Object.keys(env)) {
    const problem = sandboxEnvNameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
  if (Object.keys(env).length > 64) ctx.addIssue({ code: 'custom', message: 'at most 64 variables' });
});

export const PieceRuleSchema = z.strictObject({
  condition: text,
  next: text,
});

export const PieceMovementSchema = z.strictObject({
  name: z.string().regex(MOVEMENT_NAME_RE, {
    error: 'movement names must match /^[a-z][a-z0-9_-]*$/ (lower case letter first, then a-z, 0-9, _ or -)',
  }),
  instruction: text,
  allowed_tools: allowedTools.default([]),
  rules: z.array(PieceRuleSchema).default([]),
  default_next: text.optional(),
  verify: z.boolean().optional(),
  include_git_status: z.boolean().optional(),
  network: z.boolean().optional(),
  env: sandboxEnv.optional(),
  max_iterations: positiveInt.optional(),
  text_only_limit: positiveInt.optional(),
});

// The order warn < prompt < force_transition < exhausted is checked by the linter, which can point
// at the key the author wrote rather than at one filled in by a default.
export const ContextThresholdsSchema = z.strictObject({
  warn: fraction.default(PIECE_DEFAULTS.context_thresholds.warn),
  prompt: fraction.default(PIECE_DEFAULTS.context_thresholds.prompt),
  force_transition: fraction.default(PIECE_DEFAULTS.context_thresholds.force_transition),
  exhausted: fraction.default(PIECE_DEFAULTS.context_thresholds.exhausted),
});

export const PieceSchema = z.strictObject({
  name: z.string().regex(PIECE_NAME_RE, {
    error: 'piece names must be one word of letters, digits, "_", "-" or "." (e.g. develop)',
  }),
  description: z.string().optional(),
  initial_movement: text,
  max_movements: positiveInt.default(PIECE_DEFAULTS.max_movements),
  system_prompt: text,
  max_iterations: positiveInt.default(PIECE_DEFAULTS.max_iterations),
  text_only_limit: positiveInt.default(PIECE_DEFAULTS.text_only_limit),
  max_asks: z
    .number()
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must be 0 or more' })
    .default(PIECE_DEFAULTS.max_asks),
  approval_timeout: z.number().positive({ error: 'must be a number of seconds above 0' }).optional(),
  context_thresholds: ContextThresholdsSchema.prefault({}),
  env: sandboxEnv.optional(),
  movements: z.array(PieceMovementSchema).min(1, { error: 'a piece needs at least one movement' }),
});

export type PieceSchemaOutput = z.output<typeof PieceSchema>;

// Compile-time guard: the schema's output must stay assignable to the shared Piece type.
const outputIsPiece = (p: PieceSchemaOutput): Piece => p;
void outputIsPiece;
