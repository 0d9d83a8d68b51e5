// The tool table is the one source of tool names: these are the lists derived from it today, so a
// new row lands in the right lists on purpose (the tools array order is part of the prompt cache).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobToolDefinitions } from '../../engine/job-tools.js';
import { CONTROL_TOOLS, KNOWN_TOOLS } from '../../engine/piece/index.js';
import { BUILTIN_TOOLS, builtinToolsOfKind } from '../../engine/tools/tool-registry.js';
import { ALWAYS_ALLOWED_TOOL_NAMES, TOOL_TRAITS, toolTraits } from '../../engine/tools/tool-traits.js';

const names = (defs: readonly { name: string }[]) => defs.map((d) => d.name);

test('the derived lists', () => {
  assert.deepEqual(KNOWN_TOOLS, [
    'Read', 'Write', 'Edit', 'Bash', 'Grep', 'Glob', 'ReadImage',
    'RequestTool', 'RequestPackage', 'SpinOffTask', 'WaitSubTask', 'BrowseWeb',
  ]);
  assert.deepEqual(CONTROL_TOOLS, ['transition', 'complete']);
  assert.deepEqual(ALWAYS_ALLOWED_TOOL_NAMES, ['RequestTool', 'RequestPackage', 'WaitSubTask']);
  assert.deepEqual(names(builtinToolsOfKind('file')), ['Read', 'Write', 'Edit', 'Bash', 'Grep', 'Glob', 'ReadImage']);
  assert.deepEqual(names(builtinToolsOfKind('park')), ['RequestTool', 'RequestPackage', 'SpinOffTask', 'WaitSubTask']);
  assert.deepEqual(names(jobToolDefinitions()), names(BUILTIN_TOOLS));
});

test('every built-in row has its definition; BrowseWeb is listable but comes from the worker', () => {
  for (const row of TOOL_TRAITS) {
    assert.equal(BUILTIN_TOOLS.some((d) => d.name === row.name), row.source === 'builtin', row.name);
  }
  assert.deepEqual(toolTraits('BrowseWeb'), { name: 'BrowseWeb', kind: 'park', source: 'worker', alwaysAllowed: false, listable: true });
  assert.equal(toolTraits('NoSuchTool'), undefined);
});
