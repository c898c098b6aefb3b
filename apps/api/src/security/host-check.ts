import type { FastifyRequest } from 'fastify';
import { isLoopbackHost } from '@app/storage';

export { isLoopbackHost };

/**
 * The DNS-rebinding defence (issue #29): every request must name this server in its `Host` header.
 * A web page whose name was rebound to 127.0.0.1 reaches the port, but its requests carry its own
 * name (`Host: evil.example:14355`), which no allow-list names. Decisions are made on the parsed
 * name and port, never on string prefixes: `127.0.0.1.evil.com`, `LOCALHOST.`, `[0:0::1]` parse to
 * what a browser resolves. Plain module: the serve options validate flags with it.
 */

/** A parsed host: lowercase name (IPv6 in brackets, IPv4 canonical, no trailing dot) and the port when given. */
export interface HostName {
  name: string;
  port?: number;
}

/** What the server answers to: loopback names on the listening port, plus the configured names. */
export interface HostPolicy {
  /** `--allow-any-host`: no Host check (warned at start). */
  anyHost: boolean;
  /** `api.allowed_hosts` + `--allowed-host` (+ a specific bind address): a name without a port matches any port. */
  allowed: HostName[];
}

/** Answered on the port the request arrived on (any port for requests without a socket, e.g. app.inject). */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

const HOST_TEXT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/;

/** Parses a `Host` header value (or an allow-list entry); undefined for anything that is not `name[:port]`. */
export function parseHost(value: string): HostName | undefined {
  const m = HOST_TEXT.exec(value.trim());
  if (!m) return undefined;
  let name: string;
  try {
    name = new URL(`http://${m[1]}`).hostname;
  } catch {
    return undefined;
  }
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '' || name.endsWith('.')) return undefined;
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return port === undefined ? { name } : { name, port };
}

/** Parses allow-list entries; throws an Error naming the first bad one (`--allowed-host` → exit 2). */
export function parseAllowedHosts(entries: string[], source: string): HostName[] {
  return entries.map((entry) => {
    const parsed = parseHost(entry);
    if (!parsed) throw new Error(`invalid ${source} entry ${JSON.stringify(entry)}: expected a host name or address, optionally with :port (e.g. conductor.example.com or 192.168.1.5:8443)`);
    return parsed;
  });
}

/** Whether `host` (as a browser would send it) names this server; `defaultPort` is the scheme's when no port is given. */
export function hostAllowed(host: HostName, policy: HostPolicy, localPort: number | undefined, defaultPort = 80): boolean {
  const port = host.port ?? defaultPort;
  if (LOOPBACK_NAMES.has(host.name) && (localPort === undefined || port === localPort)) return true;
  return policy.allowed.some((a) => a.name === host.name && (a.port === undefined || a.port === port));
}

/** The local port of the request's connection; undefined when there is no real socket (app.inject). */
export function localPortOf(req: FastifyRequest): number | undefined {
  const port = (req.raw.socket as { localPort?: unknown } | undefined)?.localPort;
  return typeof port === 'number' && port > 0 ? port : undefined;
}

/** Why the request's Host is refused, or undefined when it names this server. */
export function hostRefusal(req: FastifyRequest, policy: HostPolicy): string | undefined {
  if (policy.anyHost) return undefined;
  const raw = req.headers.host;
  if (typeof raw !== 'string' || raw.trim() === '') return 'missing Host header';
  const parsed = parseHost(raw);
  const shown = JSON.stringify(raw.slice(0, 100));
  if (!parsed) return `malformed Host header ${shown}`;
  if (hostAllowed(parsed, policy, localPortOf(req))) return undefined;
  return `host ${shown} is not allowed: this server answers to localhost, 127.0.0.1 and [::1] on its port, and the names in api.allowed_hosts / --allowed-host`;
}

/** Whether a browser `Origin` (http/https) names an allowed host; `null` and other schemes never do. */
export function originHostAllowed(origin: string, policy: HostPolicy, localPort: number | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const parsed = parseHost(url.host);
  return !!parsed && hostAllowed(parsed, policy, localPort, url.protocol === 'https:' ? 443 : 80);
}

/** `0.0.0.0`, `::` and `localhost`/127.x/::1 aside, a bind address is a name or address of its own. */
export function isWildcardHost(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || host === '[::]';
}

/**
 * The allow-list of a server bound to `bindHost`: the configured names, plus the bind address
 * itself when it is a specific non-loopback one (clients on the network name it; it is no DNS name
 * a page could rebind). Throws for a bad entry.
 */
export function buildHostPolicy(bindHost: string, configured: string[], anyHost: boolean): HostPolicy {
  const allowed = parseAllowedHosts(configured, 'allowed host');
  if (!isWildcardHost(bindHost) && !isLoopbackHost(bindHost)) {
    const own = parseHost(bindHost.includes(':') && !bindHost.startsWith('[') ? `[${bindHost}]` : bindHost);
    if (own) allowed.push(own);
  }
  return { anyHost, allowed };
}

/**
 * Binding beyond loopback answers the network: the operator names the hosts clients use, or opts
 * out explicitly with --allow-any-host. The refusal (an Error) or undefined.
 */
export function exposureRefusal(bindHost: string, configured: string[], anyHost: boolean): string | undefined {
  if (anyHost || isLoopbackHost(bindHost) || configured.length > 0) return undefined;
  return (
    `refusing to listen on ${bindHost} without an allow-list of host names: name the hosts clients use with ` +
    '--allowed-host (or api.allowed_hosts, $CONDUCTOR_ALLOWED_HOSTS), or pass --allow-any-host to turn the Host check off'
  );
}
