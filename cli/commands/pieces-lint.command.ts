// `maestro pieces lint FILE...` and `maestro pieces list`: local, no API needed.
import type { Command } from 'commander';
import { PieceError, PieceNotFoundError, formatPieceIssues, listBuiltinPieces, loadPieceFile } from '../../engine/piece/piece-loader.js';
import type { PieceIssue } from '../../engine/piece/piece-loader.js';
import { printJson, table } from '../format.js';

interface LintOutcome {
  file: string;
  ok: boolean;
  issues: PieceIssue[];
}

async function lintFile(file: string): Promise<LintOutcome> {
  try {
    await loadPieceFile(file);
    return { file, ok: true, issues: [] };
  } catch (err) {
    if (err instanceof PieceError) return { file, ok: false, issues: err.issues };
    if (err instanceof PieceNotFoundError) {
      return { file, ok: false, issues: [{ file, line: null, movement: null, field: null, message: 'file not found' }] };
    }
    const message = (err as NodeJS.ErrnoException).code ? `cannot read: ${(err as Error).message}` : (err as Error).message;
    return { file, ok: false, issues: [{ file, line: null, movement: null, field: null, message }] };
  }
}

export function registerPiecesCommands(program: Command): void {
  const pieces = program.command('pieces').description('piece tools (local; no API needed)');

  pieces
    .command('lint')
    .description('check piece files; prints every issue with its line, exits 1 if any')
    .argument('<files...>', 'piece YAML files')
    .option('--json', 'print [{file, ok, issues}] as JSON')
    .action(async (files: string[], opts: { json?: boolean }) => {
      const outcomes: LintOutcome[] = [];
      for (const file of files) outcomes.push(await lintFile(file));
      if (opts.json) printJson(outcomes);
      else {
        for (const o of outcomes) {
          process.stdout.write(o.ok ? `${o.file}: ok\n` : `${formatPieceIssues(o.issues)}\n`);
        }
      }
      if (outcomes.some((o) => !o.ok)) process.exitCode = 1;
    });

  pieces
    .command('list')
    .description('list the built-in pieces')
    .option('--json', 'print the pieces as JSON')
    .action(async (opts: { json?: boolean }) => {
      const list = await listBuiltinPieces();
      if (opts.json) printJson(list);
      else process.stdout.write(`${table(['NAME', 'DESCRIPTION'], list.map((p) => [p.name, p.description.replace(/\s+/g, ' ').trim()]))}\n`);
    });
}
