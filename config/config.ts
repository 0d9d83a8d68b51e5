// Every environment variable Maestro reads, validated in one place (docs/configuration.md lists them).
import path from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);

const EnvSchema = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  MAESTRO_TASK_QUEUE: z.string().min(1).default('maestro'),
  DATABASE_URL: z.string().url().optional(),
  MAESTRO_LLM_BASE_URL: z.string().url().optional(),
  MAESTRO_LLM_API_KEY: z.string().optional(),
  MAESTRO_LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  MAESTRO_CONTEXT_WINDOW: z.coerce.number().int().positive().default(128_000),
  MAESTRO_CONTEXT_WINDOWS: z
    .string()
    .regex(/^\s*[^=,\s]+\s*=\s*\d+\s*(,\s*[^=,\s]+\s*=\s*\d+\s*)*$/, 'expected model=tokens pairs separated by commas')
    .optional(),
  MAESTRO_HOME: z.string().min(1).default('.maestro'),
  MAESTRO_API_TOKEN: z.string().min(1).optional(),
  MAESTRO_API_PORT: port.default(8787),
  MAESTRO_API_HOST: z.string().min(1).default('127.0.0.1'),
  MAESTRO_API_URL: z.string().url().optional(),
  MAESTRO_HEARTBEAT_TIMEOUT: z.coerce.number().positive().default(120),
  MAESTRO_LOG_LEVEL: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('WARN'),
});

export const ENV_KEYS = Object.keys(EnvSchema.shape);

export interface MaestroConfig {
  temporal: { address: string; namespace: string; taskQueue: string };
  databaseUrl: string | undefined;
  llm: { baseUrl: string | undefined; apiKey: string | undefined; model: string; contextWindow: number };
  /** Seconds without a heartbeat after which a movement attempt counts as lost and is retried. */
  heartbeatTimeoutSeconds: number;
  /** Level of the Temporal SDK's own log (worker, bundler) in maestro processes. */
  logLevel: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  home: string;
  api: { port: number; host: string; token: string | undefined; url: string };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): MaestroConfig {
  // Empty strings mean "unset" for every variable: shells and compose files produce them easily.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  if (typeof cleaned.MAESTRO_LOG_LEVEL === 'string') cleaned.MAESTRO_LOG_LEVEL = cleaned.MAESTRO_LOG_LEVEL.toUpperCase();
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid environment: ${issues}`);
  }
  const e = parsed.data;
  const home = path.resolve(e.MAESTRO_HOME);
  const apiHostForUrl = e.MAESTRO_API_HOST === '0.0.0.0' || e.MAESTRO_API_HOST === '::' ? '127.0.0.1' : e.MAESTRO_API_HOST;
  return {
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, taskQueue: e.MAESTRO_TASK_QUEUE },
    databaseUrl: e.DATABASE_URL,
    llm: {
      baseUrl: e.MAESTRO_LLM_BASE_URL,
      apiKey: e.MAESTRO_LLM_API_KEY,
      model: e.MAESTRO_LLM_MODEL,
      contextWindow: contextWindowFor(e.MAESTRO_LLM_MODEL, e.MAESTRO_CONTEXT_WINDOWS) ?? e.MAESTRO_CONTEXT_WINDOW,
    },
    heartbeatTimeoutSeconds: e.MAESTRO_HEARTBEAT_TIMEOUT,
    logLevel: e.MAESTRO_LOG_LEVEL,
    home,
    api: {
      port: e.MAESTRO_API_PORT,
      host: e.MAESTRO_API_HOST,
      token: e.MAESTRO_API_TOKEN,
      url: e.MAESTRO_API_URL ?? `http://${apiHostForUrl}:${e.MAESTRO_API_PORT}`,
    },
  };
}

/** The per-model setting (MAESTRO_CONTEXT_WINDOWS="model=tokens,...") for this model, if it has one. */
export function contextWindowFor(model: string, table: string | undefined): number | undefined {
  for (const pair of table?.split(',') ?? []) {
    const [name, tokens] = pair.split('=').map((x) => x.trim());
    if (name === model) return Number(tokens);
  }
  return undefined;
}

/** Paths under MAESTRO_HOME. */
export function homePaths(home: string) {
  return {
    tools: path.join(home, 'tools'),
    temporalDb: path.join(home, 'temporal', 'temporal.db'),
    pgdata: path.join(home, 'pgdata'),
    workspaces: path.join(home, 'workspaces'),
    cache: path.join(home, 'cache'),
    stackFile: path.join(home, 'stack.json'),
  };
}
