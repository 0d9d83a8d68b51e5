// The HTTP API over a test stack, and the `maestro` CLI as a user runs it (bin/maestro.js in a child
// process) pointed at that API: for tests that drive parks the way a person does.
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiApp } from '../../api/app.js';
import { startApiServer } from '../../api/server.js';
import type { TestStack } from './test-stack.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = path.join(root, 'bin', 'maestro.js');

export interface TestApi {
  url: string;
  /** fetch against the API: JSON in, status and parsed JSON out. */
  call(method: 'GET' | 'POST', pathname: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export async function startTestApi(stack: Pick<TestStack, 'db' | 'client' | 'config'>): Promise<TestApi> {
  const server = await startApiServer(createApiApp({ db: stack.db, client: stack.client, config: stack.config }), {
    host: '127.0.0.1',
    port: 0,
  });
  return {
    url: server.url,
    async call(method, pathname, body) {
      const res = await fetch(`${server.url}${pathname}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    stop: () => server.stop(),
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

/** Runs `maestro ...args` against apiUrl. */
export function runCli(apiUrl: string, args: string[]): Promise<CliResult> {
  return runMaestro(args, { MAESTRO_API_URL: apiUrl });
}
