// Serves the API app over HTTP with @hono/node-server.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { appHasToken } from './app.js';
import { createHostPolicy, guardRequest, type HostPolicy } from './host-guard.js';

export class InsecureListenError extends Error {
  override name = 'InsecureListenError';
}

export class ApiListenError extends Error {
  override name = 'ApiListenError';
}

export interface ApiServerOptions {
  host: string;
  port: number;
  /** Overrides what the app was built with; only used for the "a served API needs a token" check. */
  token?: string;
  /** Extra Host names the API answers to (MAESTRO_API_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** MAESTRO_API_URL: its host is the API's own too. */
  publicUrl?: string;
}

// Hono's generics differ per app (OpenAPIHono adds schema types); only fetch is needed here.
// Method syntax keeps the parameter check bivariant, so any Hono app fits.
export interface FetchApp {
  fetch(request: Request, env?: object, executionCtx?: unknown): Response | Promise<Response>;
}

export async function startApiServer(app: FetchApp, opts: ApiServerOptions): Promise<{ url: string; stop(): Promise<void> }> {
  const hasToken = opts.token !== undefined ? opts.token !== '' : appHasToken(app) === true;
  // Loopback is no boundary: every local process and every web page the operator visits can reach it.
  if (!hasToken) {
    throw new InsecureListenError(
      `refusing to serve the API on ${opts.host} without a token: set MAESTRO_API_TOKEN, or start it with \`maestro dev\` / \`maestro api\`, which use MAESTRO_HOME/api-token`,
    );
  }
  let policy: HostPolicy | undefined;
  const server = serve({
    fetch: (req, env) => {
      // The policy needs the bound port; it is set in the 'listening' handler, before any request.
      if (!policy) return new Response(null, { status: 503 });
      return guardRequest(req, policy) ?? app.fetch(req, env);
    },
    hostname: opts.host,
    port: opts.port,
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(new ApiListenError(`cannot listen on ${opts.host}:${opts.port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      const bound = server.address() as AddressInfo;
      policy = createHostPolicy({ host: opts.host, port: bound.port, allowedHosts: opts.allowedHosts, publicUrl: opts.publicUrl });
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
  return {
    url: `http://${urlHost}:${addr.port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(err) : resolve()));
        // Idle keep-alive sockets would hold close() open for seconds; drop them.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
