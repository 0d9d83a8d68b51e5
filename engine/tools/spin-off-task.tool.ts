// SpinOffTask: starts a child job (a Temporal child workflow of this job). In the job's own
// workspace it starts at once; toward another workspace a person approves first (the
// WAITING_HUMAN_SPAWN_REQUEST park). Re-entry is safe (invariant: re-entry is idempotent): the same call in a re-run movement
// finds the child by its spawn key, or the decided request, and never starts a second one.
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { resolvePiece } from '../piece/piece-loader.js';
import { defineTool, type ToolServices, type SpawnInput, type ToolContext, type ToolOutput } from './tool.js';
import type { BuiltinToolName } from './tool-traits.js';

export const SPIN_OFF_TASK_TOOL = 'SpinOffTask' satisfies BuiltinToolName;

const schema = z.object({
  instruction: z.string().trim().min(1).max(100_000).describe('What the subtask must do, complete in itself: the child does not see this conversation.'),
  piece: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'must be the name of a built-in piece (e.g. chat, develop)')
    .optional()
    .describe('Built-in piece the child follows (e.g. "chat", "develop"). Default: the piece of this job.'),
  workspace: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      'Folder the child works in: absolute, or relative to this job\'s workspace ("../other-project"). ' +
        'Default: a fresh workspace of its own. This workspace (or a folder in it) starts at once; ' +
        'any other folder needs a person\'s approval first (the job waits for it).',
    ),
});

export type SpinOffTaskArgs = z.infer<typeof schema>;

/** The job has started as many subtasks as MAESTRO_MAX_SUBTASKS allows. */
export class SubtaskLimitError extends Error {
  override name = 'SubtaskLimitError';
  constructor(
    readonly limit: number,
    readonly started: number,
    options?: { cause?: unknown },
  ) {
    super(`this job has started ${started} subtasks; the limit is ${limit}`, options);
  }
}

function limitReached(err: SubtaskLimitError): ToolOutput {
  return {
    isError: true,
    content:
      `Not started: ${err.message} (MAESTRO_MAX_SUBTASKS). No new subtask can be started in this job. ` +
      'Do the remaining work yourself in this movement, or call WaitSubTask to wait for the subtasks already running and use their results.',
  };
}

export type SpawnTarget = { kind: 'own'; dir?: string } | { kind: 'other'; dir: string } | { kind: 'invalid'; message: string };

/**
 * Where a child asked for with `requested` would work. Relative paths are resolved against the job's
 * workspace, like every other tool path, so "../x" names a sibling folder. Existing paths are
 * compared by their real path (a symlink to this workspace is this workspace).
 */
export async function resolveSpawnWorkspace(jobRoot: string, requested: string | undefined): Promise<SpawnTarget> {
  if (requested === undefined) return { kind: 'own' };
  if (requested.includes('\0')) return { kind: 'invalid', message: 'workspace contains a NUL character' };
  const root = await realpath(jobRoot).catch(() => path.resolve(jobRoot));
  const resolved = path.resolve(root, requested.trim());
  if (resolved === path.parse(resolved).root) {
    return { kind: 'invalid', message: `workspace "${requested}" is the filesystem root; name a project folder` };
  }
  let dir = resolved;
  try {
    const st = await stat(resolved);
    if (!st.isDirectory()) return { kind: 'invalid', message: `workspace "${requested}" (${resolved}) exists and is not a folder` };
    dir = await realpath(resolved);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      return { kind: 'invalid', message: `workspace "${requested}" (${resolved}) cannot be used: ${(err as Error).message}` };
    }
  }
  const inside = dir === root || dir.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  return inside ? { kind: 'own', dir } : { kind: 'other', dir };
}

async function startChild(services: ToolServices, input: SpawnInput): Promise<ToolOutput> {
  let child: Awaited<ReturnType<ToolServices['spawnChild']>>;
  try {
    child = await services.spawnChild(input);
  } catch (err) {
    if (err instanceof SubtaskLimitError) return limitReached(err);
    throw err;
  }
  const piece = input.piece ?? "this job's piece";
  if (!child.created) {
    return { content: `already started as job ${child.jobId}, status ${child.status}. Call WaitSubTask to wait for its result.` };
  }
  return { content: `started subtask job ${child.jobId} (piece ${piece}). Call WaitSubTask when you need its result.` };
}

async function spinOff(args: SpinOffTaskArgs, ctx: ToolContext): Promise<ToolOutput> {
  const services = ctx.services;
  if (!services) return { isError: true, content: 'SpinOffTask is not available here (no job services).' };
  const instruction = args.instruction.trim();
  // Only built-in names: a path would let the model make the worker read any YAML file.
  if (args.piece) await resolvePiece(args.piece);

  const target = await resolveSpawnWorkspace(ctx.workspace.root, args.workspace);
  if (target.kind === 'invalid') return { isError: true, content: target.message };
  // Checked before a person is asked: approving a spawn that could never start wastes their time.
  const problem = target.dir === undefined ? null : await services.workspaceProblem(target.dir);
  if (problem) return { isError: true, content: `Not started: ${problem}.` };
  if (target.kind === 'own') return startChild(services, { instruction, piece: args.piece, workspace: target.dir });

  // Another workspace: bound to exactly this call, decided once (invariant: re-entry is idempotent).
  const binding = { instruction, piece: args.piece ?? null, workspace: target.dir };
  const existing = await services.findRequest('spawn', binding);
  if (existing?.status === 'approved') return startChild(services, { instruction, piece: args.piece, workspace: target.dir });
  if (existing?.status === 'declined') {
    return {
      content:
        `A person declined starting this subtask in ${target.dir}${existing.note ? ` (note: ${existing.note})` : ''}. ` +
        'Do not ask again: do the work here, or choose another way.',
    };
  }
  const request =
    existing?.status === 'pending'
      ? existing
      : await services.createRequest({
          kind: 'spawn',
          binding,
          args: { instruction, piece: args.piece ?? null, workspace: target.dir },
          reason: `start a subtask in ${target.dir}: ${instruction.slice(0, 300)}`,
        });
  const summary = `waiting for approval to start a subtask in ${target.dir} (request ${request.id})`;
  return {
    content: `${summary}. The job waits; this step starts again once a person decides.`,
    park: { next: 'WAITING_HUMAN_SPAWN_REQUEST', waitReason: 'spawn_request', requestId: request.id, summary, resumeMovement: ctx.movement },
  };
}

export const spinOffTaskTool = defineTool({
  name: SPIN_OFF_TASK_TOOL,
  description:
    'Start a subtask: a separate job with its own instruction that runs in parallel with this one. ' +
    'Returns the child job id at once; call WaitSubTask to wait until your subtasks have finished. ' +
    'Calling it again with the same arguments does not start a second job. A workspace outside this ' +
    "job's needs a person's approval first.",
  schema,
  run: spinOff,
});
