// Entry point the worker bundles (workflowsPath): workflow functions only.
export { jobWorkflow } from './job.workflow.js';
