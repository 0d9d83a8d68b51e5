// Host and Origin checks at the listener. A web page the operator visits can make the browser send
// requests to 127.0.0.1:8787 (a form post, or a DNS name rebound to loopback): the browser then sends
// the page's own name as Host, or the page's origin as Origin. Only the API's own names pass.
import os from 'node:os';
import { ApiError, errorJsonResponse } from './errors.js';
import { isLoopbackHost } from './auth.js';

export interface HostPolicyOptions {
  /** The address the API listens on (MAESTRO_API_HOST). */
  host: string;
  /** The port it actually listens on. */
  port: number;
  /** Operator additions (MAESTRO_API_ALLOWED_HOSTS): `name` (any port) or `name:port`. */
  allowedHosts?: readonly string[];
  /** MAESTRO_API_URL: its host is the API's own too. */
  publicUrl?: string;
}

export interface HostPolicy {
  allowsHost(hostHeader: string, defaultPort?: number): boolean;
  allowsOrigin(origin: string): boolean;
}

interface HostPort {
  name: string;
  port: number | null;
}

/** `name[:port]` or `[v6][:port]`, lower-cased, trailing dot dropped; null when malformed. */
export function parseHostHeader(value: string): HostPort | null {
  const v = value.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && port > 65535) return null;
  return { name: m[1]!.replace(/\.$/, ''), port };
}

function bracketed(address: string): string {
  const a = address.toLowerCase();
  return a.includes(':') && !a.startsWith('[') ? `[${a}]` : a;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

function interfaceAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((i): i is os.NetworkInterfaceInfo => Boolean(i))
    .map((i) => bracketed(i.address));
}

export function createHostPolicy(opts: HostPolicyOptions): HostPolicy {
  const exact = new Set<string>();
  const anyPort = new Set<string>();
  const own = (name: string) => exact.add(`${bracketed(name)}:${opts.port}`);
  const configured = opts.host.trim().toLowerCase();
  if (WILDCARDS.has(configured)) {
    // Listening everywhere: the machine's own addresses are its names (an IP literal cannot be rebound).
    for (const n of [...LOOPBACK_NAMES, ...interfaceAddresses()]) own(n);
  } else {
    own(configured);
    if (isLoopbackHost(configured)) for (const n of LOOPBACK_NAMES) own(n);
  }
  if (opts.publicUrl) {
    try {
      const u = new URL(opts.publicUrl);
      exact.add(`${u.hostname.toLowerCase()}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`);
    } catch {
      // config validated it as a URL already
    }
  }
  for (const entry of opts.allowedHosts ?? []) {
    const hp = parseHostHeader(entry);
    if (!hp) continue;
    if (hp.port === null) anyPort.add(hp.name);
    else exact.add(`${hp.name}:${hp.port}`);
  }
  const allowsHost = (hostHeader: string, defaultPort = 80): boolean => {
    const hp = parseHostHeader(hostHeader);
    if (!hp) return false;
    return anyPort.has(hp.name) || exact.has(`${hp.name}:${hp.port ?? defaultPort}`);
  };
  return {
    allowsHost,
    allowsOrigin(origin: string): boolean {
      let u: URL;
      try {
        u = new URL(origin);
      } catch {
        return false; // "null" (sandboxed frames, file://) and junk
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
      if (u.pathname !== '/' || u.username || u.password) return false;
      return allowsHost(u.host, u.protocol === 'https:' ? 443 : 80);
    },
  };
}

/** The refusal for a request whose Host or Origin is not the API's own, or null to let it through. */
export function guardRequest(req: Request, policy: HostPolicy): Response | null {
  const headerHost = req.headers.get('host');
  let urlHost: string;
  try {
    urlHost = new URL(req.url).host;
  } catch {
    urlHost = '';
  }
  for (const h of headerHost === null ? [urlHost] : [headerHost, urlHost]) {
    if (!policy.allowsHost(h)) {
      return errorJsonResponse(
        new ApiError(421, 'misdirected_request', `this API does not answer to host "${h.slice(0, 100)}" (allowed hosts: MAESTRO_API_ALLOWED_HOSTS)`),
      );
    }
  }
  const origin = req.headers.get('origin');
  if (origin !== null && !policy.allowsOrigin(origin)) {
    return errorJsonResponse(new ApiError(403, 'forbidden_origin', `requests from origin "${origin.slice(0, 100)}" are not accepted`));
  }
  return null;
}
