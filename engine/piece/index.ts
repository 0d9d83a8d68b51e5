// The piece API for the API, CLI and activities. Workflow code must import ./piece-targets.js
// directly: the loader reads files (node:fs), which the workflow sandbox forbids.
export {
  checkPiece,
  builtinPiecesDir,
  formatPieceIssues,
  listBuiltinPieces,
  loadPieceFile,
  parsePiece,
  PieceError,
  PieceNotFoundError,
  resolvePiece,
  type PieceIssue,
} from './piece-loader.js';
export { lintPiece, type PieceLintIssue, type PiecePath } from './piece-lint.js';
export { collectPieceTransitionTargets, isSentinel, isTransitionTarget, movementTargets } from './piece-targets.js';
export {
  CONTROL_TOOLS,
  KNOWN_TOOLS,
  MOVEMENT_NAME_RE,
  PIECE_DEFAULTS,
  PIECE_NAME_RE,
  PieceSchema,
  type KnownTool,
} from './piece.schema.js';
