// The runnable definition of every built-in tool, keyed by its row in ./tool-traits.ts: the table
// says which tools exist and what they may do, this file says what runs. A row marked builtin
// without a definition here, or a definition under another name, fails to compile or to load.
import { bashTool } from './bash.tool.js';
import { editTool } from './edit.tool.js';
import { globTool } from './glob.tool.js';
import { grepTool } from './grep.tool.js';
import { readImageTool } from './read-image.tool.js';
import { readTool } from './read.tool.js';
import { requestPackageTool } from './request-package.tool.js';
import { requestTool } from './request-tool.tool.js';
import { spinOffTaskTool } from './spin-off-task.tool.js';
import type { ToolDefinition } from './tool.js';
import { BUILTIN_TOOL_NAMES, toolTraits, type BuiltinToolKind, type BuiltinToolName } from './tool-traits.js';
import { waitSubTaskTool } from './wait-sub-task.tool.js';
import { writeTool } from './write.tool.js';

/** A definition whose name is not the table row it is registered under. */
export class ToolRegistryError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ToolRegistryError';
  }
}

const DEFINITIONS: { readonly [N in BuiltinToolName]: ToolDefinition } = {
  Read: readTool,
  Write: writeTool,
  Edit: editTool,
  Bash: bashTool,
  Grep: grepTool,
  Glob: globTool,
  ReadImage: readImageTool,
  RequestTool: requestTool,
  RequestPackage: requestPackageTool,
  SpinOffTask: spinOffTaskTool,
  WaitSubTask: waitSubTaskTool,
};

for (const [name, def] of Object.entries(DEFINITIONS)) {
  if (def.name !== name) throw new ToolRegistryError(`tool definition "${def.name}" is registered as "${name}" in engine/tools/tool-registry.ts`);
}

/** Every built-in tool in table order: the order of the job's tools array. */
export const BUILTIN_TOOLS: readonly ToolDefinition[] = Object.freeze(BUILTIN_TOOL_NAMES.map((name) => DEFINITIONS[name]));

export function builtinToolsOfKind(kind: BuiltinToolKind): readonly ToolDefinition[] {
  return Object.freeze(BUILTIN_TOOLS.filter((def) => toolTraits(def.name)?.kind === kind));
}
