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
    description: 'required on every route but /api/health when MAESTRO_API_TOKEN is set',
  });
  app.doc31('/api/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Maestro API',
      version: API_VERSION,
      description: 'Submit and follow LLM-agent jobs. Errors are JSON {error: {code, message}}.',
    },
    security: [{ bearerAuth: [] }],
  });
}
