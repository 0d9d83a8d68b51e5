// The control-flow tools that park the job or spawn children (seeds 004). Each ends the movement
// with a sentinel through ToolOutput.park; the workflow waits for the matching signal.
import type { ToolDefinition } from './tool.js';

export const PARK_TOOLS: ToolDefinition[] = [];
