// The HTTP API over a test stack, and the `maestro` CLI as a user runs it (bin/maestro.js in a child
// process) pointed at that API: for tests that drive parks the way a person does.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiApp } from '../../api/app.js';
import { startApiServer } from '../../api/server.js';
import type { TestStack } from './test-stack.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = path.join(root, 'bin', 'maestro.js');

/** A served API always has a token; the test API's, unless the stack's config brings one. */
export const TEST_API_TOKEN = `test-${randomBytes(16).toString('hex')}`;
const tokens = new Map<string, string>();

export interface TestApi {
  url: string;
  token: string;
  /** fetch against the API: JSON in, status and parsed JSON out. */
  call(method: 'GET' | 'POST', pathname: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export async function startTestApi(stack: Pick<TestStack, 'db' | 'client' | 'config'>): Promise<TestApi> {
  const token = stack.config.api.token ?? TEST_API_TOKEN;
  const config = { ...stack.config, api: { ...stack.config.api, token } };
  const server = await startApiServer(createApiApp({ db: stack.db, client: stack.client, config }), {
    host: '127.0.0.1',
    port: 0,
  });
  tokens.set(server.url, token);
  return {
    url: server.url,
    token,
    async call(method, pathname, body) {
      const auth = { authorization: `Bearer ${token}` };
      const res = await fetch(`${server.url}${pathname}`, {
        method,
        headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    stop: async () => {
      tokens.delete(server.url);
      await server.stop();
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `maestro ...args` as a user would (bin/maestro.js) with a clean environment plus `env`. */
export function runMaestro(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  // Async on purpose: an API answering the CLI may run in this same process.
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), MAESTRO_HOME: path.join(os.tmpdir(), 'maestro-cli-test-home'), ...env },
        timeout: 60_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `maestro ...args` against apiUrl (a test API's: with its token). */
export function runCli(apiUrl: string, args: string[]): Promise<CliResult> {
  const token = tokens.get(apiUrl);
  return runMaestro(args, { MAESTRO_API_URL: apiUrl, ...(token ? { MAESTRO_API_TOKEN: token } : {}) });
}
