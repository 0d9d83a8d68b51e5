// Pieces: the built-ins, and linting a piece before submitting it.
import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { PieceError, YamlLimitError, listBuiltinPieces, loadPieceFile, parsePiece } from '../../engine/piece/piece-loader.js';
import { ERROR_RESPONSES, ErrorSchema, LintBody, LintResultSchema, PieceListSchema, jsonContent } from '../schemas.js';

const listRoute = createRoute({
  method: 'get',
  path: '/api/pieces',
  tags: ['pieces'],
  summary: 'The built-in pieces',
  responses: { 200: jsonContent(PieceListSchema, 'pieces'), ...ERROR_RESPONSES },
});

const lintRoute = createRoute({
  method: 'post',
  path: '/api/pieces/lint',
  tags: ['pieces'],
  summary: 'Lint a piece given as YAML text (200 with ok false when it has issues; 422 when the YAML breaks a size/depth/alias limit)',
  request: { body: { content: { 'application/json': { schema: LintBody } }, required: true } },
  responses: {
    200: jsonContent(LintResultSchema, 'the issues (at most 50, then one saying how many more), empty when ok'),
    ...ERROR_RESPONSES,
    422: jsonContent(ErrorSchema, 'yaml_limit_exceeded: the YAML is too big, too deep or has too many aliases; refused before parsing'),
  },
});

export function registerPieceRoutes(app: OpenAPIHono): void {
  app.openapi(listRoute, async (c) => {
    const builtins = await listBuiltinPieces();
    const pieces = await Promise.all(
      builtins.map(async (b) => {
        const piece = await loadPieceFile(b.file);
        return { name: b.name, description: b.description, movements: piece.movements.map((m) => m.name) };
      }),
    );
    return c.json({ pieces }, 200);
  });

  app.openapi(lintRoute, async (c) => {
    const { yaml, file } = c.req.valid('json');
    try {
      parsePiece(yaml, file ?? 'piece.yaml');
      return c.json({ ok: true, issues: [] }, 200);
    } catch (err) {
      if (err instanceof PieceError && !(err instanceof YamlLimitError)) return c.json({ ok: false, issues: err.issues }, 200);
      throw err;
    }
  });
}
