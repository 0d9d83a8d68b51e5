// The HTTP API app: routes, auth, and one error format for everything that can go wrong.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Client } from '@temporalio/client';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { MaestroConfig } from '../config/config.js';
import type { Db } from '../db/database.js';
import { bearerAuth } from './auth.js';
import { ApiError, InvalidRequestError, errorResponse, formatZodIssues } from './errors.js';
import { registerBrowserRoutes } from './routes/browser.routes.js';
import { registerCommentRoutes } from './routes/comments.routes.js';
import { registerJobRoutes } from './routes/jobs.routes.js';
import { registerMetaRoutes } from './routes/meta.routes.js';
import { registerPieceRoutes } from './routes/pieces.routes.js';
import { registerRequestRoutes } from './routes/requests.routes.js';

export interface ApiDeps {
  db: Db;
  client: Client;
  config: MaestroConfig;
  /** Per-request limit on Temporal calls (start, signal); default 10 s. */
  temporalTimeoutMs?: number;
}

/** Generous for a 100k-char instruction or a big piece, small enough to refuse junk early. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

// startApiServer reads this to refuse a public listener on an app built without a token.
const appTokens = new WeakMap<object, string | undefined>();

export function appHasToken(app: object): boolean | undefined {
  return appTokens.has(app) ? Boolean(appTokens.get(app)) : undefined;
}

/**
 * PostgreSQL stores no NUL in text or jsonb, so a string holding one would fail at the insert as a
 * 500, after a workspace was made: refused up front, for every JSON body (the body is cached, the
 * route's validator reads it again).
 */
const refuseNulInJson: MiddlewareHandler = async (c, next) => {
  if (/json/i.test(c.req.header('content-type') ?? '')) {
    const text = await c.req.text();
    // JSON spells NUL as \u0000 (a raw one is invalid JSON, but look for it anyway).
    if (text.includes('\\u0000') || text.includes('\0')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined; // malformed JSON: the validator answers that
      }
      if (parsed !== undefined && JSON.stringify(parsed).includes('\\u0000')) {
        throw new InvalidRequestError('request body: strings must not contain NUL characters (\\u0000)');
      }
    }
  }
  await next();
};

export function createApiApp(deps: ApiDeps): OpenAPIHono {
  const app = new OpenAPIHono({
    defaultHook: (result) => {
      if (!result.success) throw new InvalidRequestError(formatZodIssues(result.error.issues), { cause: result.error });
    },
  });
  appTokens.set(app, deps.config.api.token);

  app.onError((err, c) => errorResponse(c, err));
  app.notFound((c) => {
    const allowed = methodsFor(app, c.req.path);
    if (allowed.length > 0) {
      c.header('Allow', allowed.join(', '));
      return errorResponse(c, new ApiError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path} (allowed: ${allowed.join(', ')})`));
    }
    return errorResponse(c, new ApiError(404, 'not_found', `no route ${c.req.method} ${c.req.path}`));
  });

  app.use('/api/*', bearerAuth(deps.config.api.token));
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, 'payload_too_large', `request body is larger than ${MAX_BODY_BYTES} bytes`);
      },
    }),
  );
  app.use('/api/*', refuseNulInJson);

  registerMetaRoutes(app);
  registerJobRoutes(app, deps);
  registerCommentRoutes(app, deps);
  registerBrowserRoutes(app, deps);
  registerRequestRoutes(app, deps);
  registerPieceRoutes(app);
  return app;
}

/** The methods some route answers on this path (HEAD with GET), for a 405's Allow header. */
function methodsFor(app: OpenAPIHono, pathname: string): string[] {
  const methods = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL' || !routePattern(r.path).test(pathname)) continue;
    methods.add(r.method);
    if (r.method === 'GET') methods.add('HEAD');
  }
  return [...methods].sort();
}

const patterns = new Map<string, RegExp>();

function routePattern(routePath: string): RegExp {
  let re = patterns.get(routePath);
  if (!re) {
    const body = routePath
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    re = new RegExp(`^${body}/?$`);
    patterns.set(routePath, re);
  }
  return re;
}
