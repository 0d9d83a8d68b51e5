// Bearer-token guard for /api/*. Health stays open so load balancers and `maestro dev` can probe it.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from './errors.js';

const OPEN_PATHS = new Set(['/api/health']);

// Hashing first gives equal-length buffers, so the comparison time does not reveal the token length.
function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

export function bearerAuth(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (!token || OPEN_PATHS.has(c.req.path)) return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!match || !tokenMatches(match[1]!.trim(), token)) {
      c.header('WWW-Authenticate', 'Bearer realm="maestro"');
      throw new UnauthorizedError();
    }
    return next();
  };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\]|::ffff:127(\.\d{1,3}){3})$/i;

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host.trim());
}
