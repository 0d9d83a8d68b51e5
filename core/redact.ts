// One redactor for the worker's and the API's secrets (MAESTRO_LLM_API_KEY, MAESTRO_API_TOKEN,
// DATABASE_URL's password, the embedded database's password). They must never reach events, logs,
// workflow history, comments or error messages: an LLM provider's 401 likes to echo the key it got.
// The registry is filled at start (registerSecretsFromConfig, and the embedded database registers
// its own password); the few choke points that write engine text call redactSecrets/redactDeep.
//
// Pure (no Node built-ins): core/ is also imported by workflow code.

export const REDACTED = '[REDACTED]';

/**
 * Shorter values are not treated as secrets: redacting a 6-letter word everywhere (compose's
 * default password is "maestro") would mangle paths and names while protecting nothing.
 */
export const MIN_SECRET_LENGTH = 8;

const secrets = new Set<string>();
let pattern: RegExp | null = null;

/** Adds a secret (and its obvious encodings) to the registry; blanks and short values are ignored. */
export function registerSecret(value: string | null | undefined): void {
  const secret = value?.trim();
  if (!secret || secret.length < MIN_SECRET_LENGTH || secrets.has(secret)) return;
  secrets.add(secret);
  pattern = null;
}

/** The secrets a Maestro process holds, from its configuration. */
export function registerSecretsFromConfig(config: {
  llm: { apiKey?: string | undefined };
  api: { token?: string | undefined };
  databaseUrl?: string | undefined;
}): void {
  registerSecret(config.llm.apiKey);
  registerSecret(config.api.token);
  registerSecret(passwordOfUrl(config.databaseUrl));
}

/** The password in a connection URL (postgres://user:password@host/db), decoded. */
export function passwordOfUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/@:]*:([^/@]*)@/i.exec(url);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return m[1];
  }
}

/** The text with every registered secret, and its URL/JSON/base64 encodings, replaced. */
export function redactSecrets(text: string): string {
  if (secrets.size === 0 || typeof text !== 'string' || text === '') return text;
  pattern ??= buildPattern();
  return text.replace(pattern, REDACTED);
}

/** Strings anywhere in a JSON-like value (object keys included) redacted; a new value, the input untouched. */
export function redactDeep<T>(value: T): T {
  if (secrets.size === 0) return value;
  return walk(value, 0) as T;
}

/**
 * Redacts an error's message, stack and own data (an SDK error's parsed response body), and those
 * of its causes, in place, so that whatever serialises it afterwards (Temporal's failure
 * converter, a logger's inspect) sees no secret.
 */
export function redactError<T>(err: T): T {
  if (secrets.size === 0) return err;
  let e: unknown = err;
  for (let depth = 0; depth < 10 && e instanceof Error; depth++) {
    const fields = e as unknown as Record<string, unknown>;
    for (const key of ['message', 'stack', ...Object.keys(e)]) {
      if (key === 'cause') continue;
      try {
        const v = fields[key];
        if (typeof v === 'string' || (v !== null && typeof v === 'object')) fields[key] = walk(v, 0);
      } catch {
        // a read-only field: nothing we can do about it here
      }
    }
    e = e.cause;
  }
  return err;
}

function walk(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (depth > 50 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactSecrets(k), walk(v, depth + 1)]));
}

function buildPattern(): RegExp {
  const variants = new Set<string>();
  for (const s of secrets) {
    variants.add(s);
    variants.add(encodeURIComponent(s));
    variants.add(JSON.stringify(s).slice(1, -1));
    const b64 = base64(s);
    variants.add(b64);
    variants.add(b64.replace(/=+$/, ''));
    variants.add(b64.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
  }
  const alternatives = [...variants]
    .filter((v) => v.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length)
    .map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(alternatives.join('|'), 'g');
}

function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
