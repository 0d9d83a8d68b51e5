// The long-running commands: `dev` (everything in one process), `worker`, `api`, and `demo`.
// The stack modules load Temporal's native worker: imported only when one of these commands runs,
// so the client commands (jobs, show, pieces lint) start fast.
import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import type { Stack, StackOptions } from '../../infra/stack.js';

export function registerStackCommands(program: Command): void {
  program
    .command('dev')
    .description('Temporal dev server + database + worker + API in one process (Ctrl-C stops everything)')
    .option('--no-temporal', 'connect to the Temporal server at TEMPORAL_ADDRESS instead of starting one')
    .action(async (opts: { temporal: boolean }) => {
      const config = loadConfig();
      await serve({ config, temporal: opts.temporal ? 'start' : 'connect', worker: true, api: true });
    });

  program
    .command('worker')
    .description('run a worker on MAESTRO_TASK_QUEUE (needs TEMPORAL_ADDRESS and DATABASE_URL)')
    .action(async () => {
      const config = requireDatabase(loadConfig(), 'worker');
      await serve({ config, temporal: 'connect', worker: true });
    });

  program
    .command('api')
    .description('serve the HTTP API on MAESTRO_API_PORT (needs TEMPORAL_ADDRESS and DATABASE_URL)')
    .action(async () => {
      const config = requireDatabase(loadConfig(), 'api');
      await serve({ config, temporal: 'connect', api: true });
    });

  program
    .command('demo')
    .description('run the develop piece end to end on a small task (scripted model unless MAESTRO_LLM_BASE_URL is set)')
    .action(async () => {
      const { runDemo } = await import('./demo.command.js');
      process.exitCode = await runDemo();
    });
}

function requireDatabase(config: ReturnType<typeof loadConfig>, what: string) {
  if (!config.databaseUrl) {
    // Embedded PGlite lives inside one process; a separate worker or API cannot share its files.
    throw new Error(`maestro ${what} needs DATABASE_URL (the embedded database is only available in \`maestro dev\`)`);
  }
  return config;
}

async function serve(opts: StackOptions): Promise<void> {
  const log = (line: string) => console.error(`[maestro] ${line}`);
  const { startStack } = await import('../../infra/stack.js');
  const stack = await startStack({ ...opts, log });
  printReady(stack, opts);
  await waitForShutdownSignal();
  log('stopping...');
  await stack.stop();
  log('stopped');
}

function printReady(stack: Stack, opts: StackOptions): void {
  const lines = [`maestro is running (task queue "${stack.config.temporal.taskQueue}")`];
  lines.push(`  Temporal:    ${stack.config.temporal.address}${opts.temporal === 'start' ? ' (dev server)' : ''}`);
  if (stack.temporalUiUrl) lines.push(`  Temporal UI: ${stack.temporalUiUrl}`);
  lines.push(`  Database:    ${stack.databaseLabel}`);
  if (opts.worker) lines.push('  Worker:      running');
  if (stack.apiUrl) lines.push(`  API:         ${stack.apiUrl}/api  (OpenAPI: ${stack.apiUrl}/api/openapi.json)`);
  if (stack.apiToken) {
    const where = stack.apiToken.source === 'env' ? 'MAESTRO_API_TOKEN' : `${stack.apiToken.file}${stack.apiToken.source === 'generated' ? ' (new)' : ''}`;
    lines.push(`  API token:   ${where}  (the local CLI reads it; send it as Authorization: Bearer)`);
  }
  lines.push('Press Ctrl-C to stop.');
  console.log(lines.join('\n'));
}

function waitForShutdownSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
