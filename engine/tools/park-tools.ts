// The control-flow tools that park the job or spawn children (seeds 004). Each ends the movement
// with a sentinel through ToolOutput.park; the workflow waits for the matching signal.
import { requestPackageTool } from './request-package.tool.js';
import { requestTool } from './request-tool.tool.js';
import { spinOffTaskTool } from './spin-off-task.tool.js';
import type { ToolDefinition } from './tool.js';
import { waitSubTaskTool } from './wait-sub-task.tool.js';

export const PARK_TOOLS: ToolDefinition[] = [requestTool, requestPackageTool, spinOffTaskTool, waitSubTaskTool];
