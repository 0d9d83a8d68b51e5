// Health (open, for probes) and the OpenAPI document.
import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { HealthSchema, jsonContent } from '../schemas.js';

export const API_VERSION = '0.1.0';

const healthRoute = createRoute({
  method: 'get',
  path: '/api/health',
  tags: ['meta'],
  summary: 'Liveness probe (no auth)',
  security: [],
  responses: { 200: jsonContent(HealthSchema, 'the API process is up') },
});

export function registerMetaRoutes(app: OpenAPIHono): void {
  app.openapi(healthRoute, (c) => c.json({ ok: true, version: API_VERSION }, 200));

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'required on every route but /api/health: MAESTRO_API_TOKEN, or the token `maestro dev` / `maestro api` generate into MAESTRO_HOME/api-token',
  });
  const config = {
    openapi: '3.1.0' as const,
    info: {
      title: 'Maestro API',
      version: API_VERSION,
      description:
        'Submit and follow LLM-agent jobs. Errors are JSON {error: {code, message}}. Every request must carry a Host ' +
        "that is the API's own (421 otherwise) and no foreign Origin (403); a method a path does not have is 405 with an Allow header.",
    },
    security: [{ bearerAuth: [] }],
  };
  // Served by hand so every operation states its security itself (health: none), not only the default.
  app.get('/api/openapi.json', (c) => {
    const doc = app.getOpenAPI31Document(config);
    for (const ops of Object.values(doc.paths ?? {})) {
      for (const op of Object.values(ops as Record<string, { security?: unknown[] }>)) {
        if (op && typeof op === 'object' && op.security === undefined) op.security = [{ bearerAuth: [] }];
      }
    }
    return c.json(doc, 200);
  });
}
