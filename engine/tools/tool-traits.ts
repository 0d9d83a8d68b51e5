// The one table of tool names and what the engine knows about each. Every list of tool names (the
// piece schema's KNOWN_TOOLS, the always-allowed tools, the order of the job's tools array) is
// derived from it. Pure: no imports at all, because the piece schema (usable from workflow code)
// reads it; the runnable definitions live in ./tool-registry.ts and are checked against it.

/** file: works in the workspace; park: may end the movement with a park; control: ends the movement itself. */
export type ToolKind = 'file' | 'park' | 'control';

/**
 * Where a tool's definition comes from. builtin: ./tool-registry.ts; worker: the worker's
 * configuration passes it as `extraTools` (no production tool yet, a test fixture provides BrowseWeb),
 * so pieces may name it before a worker offers it; wire: no definition, the job's tools array builds
 * its wire form directly (transition, complete).
 */
export type ToolSource = 'builtin' | 'worker' | 'wire';

export interface ToolTraits {
  name: string;
  kind: ToolKind;
  source: ToolSource;
  /** Every movement may call it without listing it: it only asks or waits. */
  alwaysAllowed: boolean;
  /** A piece may name it in allowed_tools. Control tools are accepted there too, but dropped. */
  listable: boolean;
}

/** In this order: the job's tools array is part of the cached prompt prefix. */
export const TOOL_TRAITS = [
  { name: 'Read', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'Write', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'Edit', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'Bash', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'Grep', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'Glob', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'ReadImage', kind: 'file', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'RequestTool', kind: 'park', source: 'builtin', alwaysAllowed: true, listable: true },
  { name: 'RequestPackage', kind: 'park', source: 'builtin', alwaysAllowed: true, listable: true },
  { name: 'SpinOffTask', kind: 'park', source: 'builtin', alwaysAllowed: false, listable: true },
  { name: 'WaitSubTask', kind: 'park', source: 'builtin', alwaysAllowed: true, listable: true },
  { name: 'BrowseWeb', kind: 'park', source: 'worker', alwaysAllowed: false, listable: true },
  { name: 'transition', kind: 'control', source: 'wire', alwaysAllowed: false, listable: false },
  { name: 'complete', kind: 'control', source: 'wire', alwaysAllowed: false, listable: false },
] as const satisfies readonly ToolTraits[];

type Row = (typeof TOOL_TRAITS)[number];
export type ToolName = Row['name'];
/** Names a piece may list in allowed_tools (control tools aside). */
export type ListableToolName = Extract<Row, { listable: true }>['name'];
export type ControlToolName = Extract<Row, { kind: 'control' }>['name'];
/** Tools with a definition in ./tool-registry.ts. */
export type BuiltinToolName = Extract<Row, { source: 'builtin' }>['name'];
export type BuiltinToolKind = Extract<Row, { source: 'builtin' }>['kind'];

function namesWhere<N extends string = string>(keep: (t: ToolTraits) => boolean): readonly N[] {
  return Object.freeze(TOOL_TRAITS.filter(keep).map((t) => t.name as N));
}

export const LISTABLE_TOOL_NAMES = namesWhere<ListableToolName>((t) => t.listable);
export const CONTROL_TOOL_NAMES = namesWhere<ControlToolName>((t) => t.kind === 'control');
export const ALWAYS_ALLOWED_TOOL_NAMES = namesWhere((t) => t.alwaysAllowed);
export const BUILTIN_TOOL_NAMES = namesWhere<BuiltinToolName>((t) => t.source === 'builtin');

export function toolTraits(name: string): ToolTraits | undefined {
  return TOOL_TRAITS.find((t) => t.name === name);
}
