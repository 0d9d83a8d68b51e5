// Activity factory (as in the Temporal samples): dependencies come in, the functions the worker
// registers come out. The workflow imports only the *type* of this object.
import type { MaestroConfig } from '../config/config.js';
import type { Db } from '../db/database.js';
import { createLlmClient, type LlmClient } from '../engine/llm-client.js';
import { createRecordJobStatus } from './record-job-status.activity.js';
import { createRunMovement } from './run-movement.activity.js';
import { createExpireRequest } from './expire-request.activity.js';
import { createDescribeChildJob, createLoadJobPiece } from './job-piece.activity.js';
import { Client, Connection } from '@temporalio/client';
import type { ToolDefinition } from '../engine/tools/tool.js';

export interface ActivityDeps {
  db: Db;
  config: MaestroConfig;
  /** Injected by tests; otherwise built from config.llm on first use. */
  llm?: LlmClient;
  /** Temporal client for signals the activities send (SpinOffTask); connected on first use otherwise. */
  client?: Client;
  /** Tools beyond the built-in ones (a test browser tool, later real ones), offered to every job. */
  extraTools?: ToolDefinition[];
  now?: () => Date;
}

export function createActivities(deps: ActivityDeps) {
  let llm = deps.llm;
  const getLlm = () => (llm ??= createLlmClient(deps.config.llm));
  let client: Promise<Client> | undefined = deps.client && Promise.resolve(deps.client);
  const getClient = () =>
    (client ??= Connection.connect({ address: deps.config.temporal.address }).then(
      (connection) => new Client({ connection, namespace: deps.config.temporal.namespace }),
    ));
  return {
    runMovement: createRunMovement({ ...deps, getLlm, getClient }),
    recordJobStatus: createRecordJobStatus(deps.db),
    expireRequest: createExpireRequest(deps.db),
    loadJobPiece: createLoadJobPiece(deps.db),
    describeChildJob: createDescribeChildJob(deps.db),
  };
}

export type Activities = ReturnType<typeof createActivities>;
