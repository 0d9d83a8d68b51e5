// The `maestro` program. Client commands talk to the API over HTTP; the stack commands (dev, worker,
// api, demo) come from stack.commands.ts. Errors end as one line on stderr: exit 1, bad usage 2.
import { Command, CommanderError } from 'commander';
import { ApiRequestError, ApiUnreachableError } from './api-client.js';
import { registerApproveCommands } from './commands/approve.command.js';
import { registerCancelCommand } from './commands/cancel.command.js';
import { registerJobsCommand } from './commands/jobs.command.js';
import { registerPiecesCommands } from './commands/pieces-lint.command.js';
import { registerReplyCommand } from './commands/reply.command.js';
import { registerRunCommand } from './commands/run.command.js';
import { registerShowCommand } from './commands/show.command.js';
import { registerStackCommands } from './commands/stack.commands.js';
import { CliError } from './format.js';

const OK_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync']);

function buildProgram(): Command {
  const program = new Command('maestro')
    .description('durable orchestrator for LLM-agent jobs, on Temporal')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    // Inherited by every subcommand registered below: usage errors come back here as exceptions.
    .exitOverride();
  registerRunCommand(program);
  registerJobsCommand(program);
  registerShowCommand(program);
  registerReplyCommand(program);
  registerCancelCommand(program);
  registerApproveCommands(program);
  registerPiecesCommands(program);
  registerStackCommands(program);
  return program;
}

function describeError(err: unknown): { message: string; exitCode: number } {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  if (err instanceof ApiRequestError) {
    // For invalid_piece the message already lists every issue, one per line.
    return { message: `${err.message} (${err.status} ${err.code})`, exitCode: 1 };
  }
  if (err instanceof ApiUnreachableError) return { message: err.message, exitCode: 1 };
  if (err instanceof Error) return { message: `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}`, exitCode: 1 };
  return { message: String(err), exitCode: 1 };
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already printed its message.
      process.exitCode = OK_CODES.has(err.code) ? 0 : 2;
      return;
    }
    const { message, exitCode } = describeError(err);
    process.stderr.write(`maestro: ${message}\n`);
    process.exitCode = exitCode;
  }
}

await main();
