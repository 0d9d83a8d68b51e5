// The CLI's HTTP client for the Maestro API. Types come from the API's own schemas (type-only import,
// so the CLI does not load the server's dependencies).
import type { z } from 'zod';
import type {
  CommentSchema,
  EventSchema,
  JobDetailSchema,
  JobSchema,
  LintResultSchema,
  PieceSummarySchema,
  PostedCommentSchema,
} from '../api/schemas.js';
import type { MaestroConfig } from '../config/config.js';

export type ApiJob = z.infer<typeof JobSchema>;
export type ApiJobDetail = z.infer<typeof JobDetailSchema>;
export type ApiComment = z.infer<typeof CommentSchema>;
export type ApiPostedComment = z.infer<typeof PostedCommentSchema>;
export type ApiEvent = z.infer<typeof EventSchema>;
export type ApiPieceSummary = z.infer<typeof PieceSummarySchema>;
export type ApiLintResult = z.infer<typeof LintResultSchema>;

export interface SubmitJobRequest {
  piece?: string;
  pieceYaml?: string;
  instruction: string;
  workspace?: string;
  parentId?: string;
}

/** The API answered with an error (a 4xx or 5xx with the {error:{code,message}} body). */
export class ApiRequestError extends Error {
  override name = 'ApiRequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: unknown[],
  ) {
    super(message);
  }
}

/** Nothing answered at the base URL (refused, DNS, timeout). */
export class ApiUnreachableError extends Error {
  override name = 'ApiUnreachableError';
}

export interface ApiClientOptions {
  baseUrl: string;
  token?: string;
  timeoutMs?: number;
}

function errnoOf(err: unknown): string | undefined {
  // undici wraps the socket error in `cause`, sometimes an AggregateError (IPv4 + IPv6 attempts).
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const rec = e as { code?: unknown; cause?: unknown; errors?: unknown[] };
    if (typeof rec.code === 'string' && rec.code !== 'UND_ERR_SOCKET') return rec.code;
    e = rec.cause ?? rec.errors?.[0];
  }
  return undefined;
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;

  constructor(opts: ApiClientOptions | string, token?: string) {
    if (typeof opts === 'string') opts = { baseUrl: opts, token };
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /**
   * MAESTRO_API_TOKEN, or else the token `maestro dev` / `maestro api` keep in MAESTRO_HOME/api-token;
   * that file is only sent to a loopback API or the configured API host, never to some other server.
   */
  static fromConfig(config: MaestroConfig, readTokenFile: (home: string) => string | undefined = () => undefined): ApiClient {
    let token = config.api.token;
    if (!token && targetsOwnApi(config)) token = readTokenFile(config.home);
    return new ApiClient({ baseUrl: config.api.url, token });
  }

  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (errnoOf(err) ?? (err as Error).message);
      throw new ApiUnreachableError(
        `cannot reach the Maestro API at ${this.baseUrl} (${why}): is \`maestro dev\` (or \`maestro api\`) running at ${this.baseUrl}?`,
        { cause: err },
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = (parsed as { error?: { code?: string; message?: string; issues?: unknown[] } } | undefined)?.error;
      const message = e?.message ?? `${res.status} ${res.statusText}${text ? `: ${text.slice(0, 200)}` : ''}`;
      throw new ApiRequestError(res.status, e?.code ?? 'http_error', message, e?.issues);
    }
    if (parsed === undefined) throw new ApiRequestError(res.status, 'bad_response', `${method} ${path}: the API answered without JSON`);
    return parsed as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request('POST', path, body);
  }

  submitJob(input: SubmitJobRequest): Promise<ApiJob> {
    return this.request('POST', '/api/jobs', input);
  }

  async listJobs(opts: { status?: string[]; limit?: number; parentId?: string } = {}): Promise<ApiJob[]> {
    const q = new URLSearchParams();
    if (opts.status?.length) q.set('status', opts.status.join(','));
    if (opts.limit !== undefined) q.set('limit', String(opts.limit));
    if (opts.parentId) q.set('parentId', opts.parentId);
    const qs = q.toString();
    return (await this.request<{ jobs: ApiJob[] }>('GET', `/api/jobs${qs ? `?${qs}` : ''}`)).jobs;
  }

  getJob(id: string): Promise<ApiJobDetail> {
    return this.request('GET', `/api/jobs/${encodeURIComponent(id)}`);
  }

  async listComments(id: string): Promise<ApiComment[]> {
    return (await this.request<{ comments: ApiComment[] }>('GET', `/api/jobs/${encodeURIComponent(id)}/comments`)).comments;
  }

  addComment(id: string, body: string): Promise<ApiPostedComment> {
    return this.request('POST', `/api/jobs/${encodeURIComponent(id)}/comments`, { body });
  }

  async listEvents(id: string, opts: { after?: number; limit?: number } = {}): Promise<ApiEvent[]> {
    const q = new URLSearchParams();
    if (opts.after !== undefined) q.set('after', String(opts.after));
    if (opts.limit !== undefined) q.set('limit', String(opts.limit));
    const qs = q.toString();
    return (await this.request<{ events: ApiEvent[] }>('GET', `/api/jobs/${encodeURIComponent(id)}/events${qs ? `?${qs}` : ''}`)).events;
  }

  async listPieces(): Promise<ApiPieceSummary[]> {
    return (await this.request<{ pieces: ApiPieceSummary[] }>('GET', '/api/pieces')).pieces;
  }

  lintPiece(yaml: string, file?: string): Promise<ApiLintResult> {
    return this.request('POST', '/api/pieces/lint', { yaml, file });
  }

  health(): Promise<{ ok: boolean; version: string }> {
    return this.request('GET', '/api/health');
  }
}

function targetsOwnApi(config: MaestroConfig): boolean {
  let host: string;
  try {
    host = new URL(config.api.url).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  const own = config.api.host.toLowerCase().replace(/^\[|\]$/g, '');
  return host === own || host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The client for MAESTRO_API_URL (or the host/port config), with MAESTRO_API_TOKEN or the token file. */
export async function apiClientFromEnv(): Promise<ApiClient> {
  const { loadConfig } = await import('../config/config.js');
  const { readApiTokenFileSync } = await import('../config/api-token.js');
  return ApiClient.fromConfig(loadConfig(), readApiTokenFileSync);
}
