// The one table of piece defaults. The zod schema (engine/piece/piece.schema.ts) fills a parsed
// piece from it, docs/pieces.md cites it, and nothing else holds a default of its own.
// Pure: bundled into workflow code.
import type { ContextThresholds, Piece } from './types.js';

export const PIECE_DEFAULTS = {
  max_movements: 20,
  max_iterations: 30,
  text_only_limit: 3,
  /** After this many ASKs the model is told to decide by itself. */
  max_asks: 3,
  context_thresholds: { warn: 0.7, prompt: 0.85, force_transition: 0.95, exhausted: 0.99 } satisfies ContextThresholds,
} as const;

/** The fields a parsed piece always has because the schema fills them from PIECE_DEFAULTS. */
export type DefaultedPieceField = keyof typeof PIECE_DEFAULTS;

/** A piece as it may sit in an old workflow history or job row: the defaulted fields possibly absent. */
export type StoredPiece = Omit<Piece, DefaultedPieceField | 'context_thresholds'> &
  Partial<Pick<Piece, Exclude<DefaultedPieceField, 'context_thresholds'>>> & { context_thresholds?: Partial<ContextThresholds> };

/**
 * Replay safety, not a second source of defaults: every stored piece was parsed by the schema (which
 * has filled these fields since the first version), so this changes nothing for them; it only keeps
 * the workflow's reading of an old input defined should a field ever be missing there.
 */
export function withPieceDefaults(piece: StoredPiece): Piece {
  return {
    ...PIECE_DEFAULTS,
    ...piece,
    context_thresholds: { ...PIECE_DEFAULTS.context_thresholds, ...piece.context_thresholds },
  };
}
