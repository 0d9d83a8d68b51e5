// Activity factory (as in the Temporal samples): dependencies come in, the functions the worker
// registers come out. The workflow imports only the *type* of this object.
import type { MaestroConfig } from '../config/config.js';
import type { Db } from '../db/database.js';
import { createLlmClient, type LlmClient } from '../engine/llm-client.js';
import { createRecordJobStatus } from './record-job-status.activity.js';
import { createRunMovement } from './run-movement.activity.js';

export interface ActivityDeps {
  db: Db;
  config: MaestroConfig;
  /** Injected by tests; otherwise built from config.llm on first use. */
  llm?: LlmClient;
  now?: () => Date;
}

export function createActivities(deps: ActivityDeps) {
  let llm = deps.llm;
  const getLlm = () => (llm ??= createLlmClient(deps.config.llm));
  return {
    runMovement: createRunMovement({ ...deps, getLlm }),
    recordJobStatus: createRecordJobStatus(deps.db),
  };
}

export type Activities = ReturnType<typeof createActivities>;
