// Every environment variable Maestro reads, validated in one place (docs/configuration.md lists them).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
  MAESTRO_MAX_SUBTASKS: z.coerce.number().int().min(0).default(20),
  MAESTRO_EMBEDDED_DB_IDLE_TX_TIMEOUT: z.coerce.number().positive().default(30),
  // Path lists (':'-separated, ';' on Windows): where API callers may put workspaces and pick piece files.
  MAESTRO_WORKSPACE_ROOTS: z.string().refine((v) => !v.includes('\0'), 'must not contain NUL').optional(),
  MAESTRO_PIECES_DIRS: z.string().refine((v) => !v.includes('\0'), 'must not contain NUL').optional(),
  MAESTRO_API_ALLOWED_HOSTS: z
    .string()
    .regex(/^\s*[A-Za-z0-9.\-[\]:]+\s*(,\s*[A-Za-z0-9.\-[\]:]+\s*)*$/, 'expected host or host:port entries separated by commas')
    .optional(),
  MAESTRO_SANDBOX: z.enum(['bwrap', 'none']).default('bwrap'),
  MAESTRO_SANDBOX_NETWORK: z.enum(['allow', 'deny']).default('allow'),
  MAESTRO_SANDBOX_CPU_SECONDS: z.coerce.number().int().positive().default(600),
  MAESTRO_SANDBOX_MEMORY_MB: z.coerce.number().int().min(64).default(8192),
  MAESTRO_SANDBOX_MAX_PROCESSES: z.coerce.number().int().min(8).default(512),
  MAESTRO_SANDBOX_MAX_FILE_MB: z.coerce.number().int().positive().default(4096),
  MAESTRO_SANDBOX_ENV: z
    .string()
    .regex(/^\s*[A-Za-z_][A-Za-z0-9_]*\s*(,\s*[A-Za-z_][A-Za-z0-9_]*\s*)*$/, 'expected variable names separated by commas')
    .optional(),
  MAESTRO_NPM_REGISTRY: z.string().url().default('https://registry.npmjs.org/'),
  MAESTRO_PIP_INDEX_URL: z.string().url().default('https://pypi.org/simple'),
  MAESTRO_ALLOW_APT_INSTALL: z.enum(['true', 'false']).default('false'),
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
  /** Most subtasks (child jobs) one job may start; SpinOffTask over it gets an error result. */
  maxSubtasks: number;
  /** Seconds a connection to the embedded database may sit idle inside a transaction. */
  embeddedDbIdleTxTimeoutSeconds: number;
  home: string;
  sandbox: SandboxConfig;
  /** Where approved package installs come from: the worker's choice, never a workspace file's. */
  packages: { npmRegistry: string; pipIndexUrl: string; allowApt: boolean };
  api: {
    port: number;
    host: string;
    /** MAESTRO_API_TOKEN; `maestro dev` / `maestro api` fill it from <home>/api-token when unset. */
    token: string | undefined;
    url: string;
    /** Extra Host header values the API answers to (a reverse proxy's name), lower-cased. */
    allowedHosts: string[];
  };
  /** Absolute folders a workspace given through the API (or a spawn) must lie strictly inside. */
  workspaceRoots: string[];
  /** Absolute folders a piece given by path must lie inside (built-in names work regardless). */
  piecesDirs: string[];
}

export interface SandboxConfig {
  mode: 'bwrap' | 'none';
  allowNetwork: boolean;
  limits: { cpuSeconds: number; memoryBytes: number; processes: number; fileBytes: number; openFiles: number };
  passThroughEnv: string[];
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
    maxSubtasks: e.MAESTRO_MAX_SUBTASKS,
    embeddedDbIdleTxTimeoutSeconds: e.MAESTRO_EMBEDDED_DB_IDLE_TX_TIMEOUT,
    home,
    sandbox: {
      mode: e.MAESTRO_SANDBOX,
      allowNetwork: e.MAESTRO_SANDBOX_NETWORK === 'allow',
      limits: {
        cpuSeconds: e.MAESTRO_SANDBOX_CPU_SECONDS,
        memoryBytes: e.MAESTRO_SANDBOX_MEMORY_MB * 1024 * 1024,
        processes: e.MAESTRO_SANDBOX_MAX_PROCESSES,
        fileBytes: e.MAESTRO_SANDBOX_MAX_FILE_MB * 1024 * 1024,
        openFiles: 1024,
      },
      passThroughEnv: (e.MAESTRO_SANDBOX_ENV ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    },
    packages: { npmRegistry: e.MAESTRO_NPM_REGISTRY, pipIndexUrl: e.MAESTRO_PIP_INDEX_URL, allowApt: e.MAESTRO_ALLOW_APT_INSTALL === 'true' },
    api: {
      port: e.MAESTRO_API_PORT,
      host: e.MAESTRO_API_HOST,
      token: e.MAESTRO_API_TOKEN,
      url: e.MAESTRO_API_URL ?? `http://${apiHostForUrl}:${e.MAESTRO_API_PORT}`,
      allowedHosts: (e.MAESTRO_API_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
    },
    workspaceRoots: pathList(e.MAESTRO_WORKSPACE_ROOTS) ?? [homePaths(home).workspaces],
    piecesDirs: pathList(e.MAESTRO_PIECES_DIRS) ?? [builtinPiecesDir(), homePaths(home).pieces],
  };
}

function pathList(value: string | undefined): string[] | undefined {
  const parts = value?.split(path.delimiter).map((p) => p.trim()).filter(Boolean) ?? [];
  return parts.length ? [...new Set(parts.map((p) => path.resolve(p)))] : undefined;
}

/** The pieces/ folder shipped with Maestro (the built-in names). */
export function builtinPiecesDir(): string {
  return fileURLToPath(new URL('../pieces', import.meta.url));
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
    apiToken: path.join(home, 'api-token'),
    pieces: path.join(home, 'pieces'),
  };
}
