// Builds the Temporal worker: the job workflow (bundled from workflows/) plus the activities,
// made by their factory with this process's dependencies.
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import type { MaestroConfig } from '../config/config.js';
import { registerSecretsFromConfig } from '../core/redact.js';
import { configurePackageSources } from '../engine/package-installer.js';
import { configureSandbox } from '../engine/sandbox/index.js';
import type { Db } from '../db/database.js';
import { WORKFLOWS_PATH } from './workflows-path.js';

export interface WorkerDeps {
  config: MaestroConfig;
  db: Db;
  connection: NativeConnection;
  llm?: ActivityDeps['llm'];
  now?: ActivityDeps['now'];
  extraTools?: ActivityDeps['extraTools'];
  /** A prebuilt workflow bundle (tests build it once); otherwise workflows/ is bundled at start. */
  workflowBundlePath?: string;
  options?: Partial<WorkerOptions>;
}

export async function createMaestroWorker(deps: WorkerDeps): Promise<Worker> {
  const bundlePath = deps.workflowBundlePath ?? process.env.MAESTRO_WORKFLOW_BUNDLE;
  registerSecretsFromConfig(deps.config);
  // Every process a tool of this worker starts goes through this one sandbox.
  configureSandbox(deps.config.sandbox);
  configurePackageSources(deps.config.packages);
  return Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.config.temporal.taskQueue,
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: WORKFLOWS_PATH }),
    activities: createActivities({ db: deps.db, config: deps.config, llm: deps.llm, now: deps.now, extraTools: deps.extraTools }),
    // Parked jobs hold no slot (they are signal waits), so slots only bound concurrent movements.
    maxConcurrentActivityTaskExecutions: 20,
    shutdownGraceTime: '10 seconds',
    ...deps.options,
  });
}
