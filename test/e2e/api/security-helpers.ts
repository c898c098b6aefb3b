import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { routeTableOf } from '../../../apps/api/src/common/route-table';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A request over a real socket with the path sent byte for byte (`curl --path-as-is`): no URL
 * normalisation, so `..`, `//` and `%61` reach the server as written. SSE bodies are not awaited.
 */
export function rawRequest(base: string, method: string, rawPath: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, method, path: rawPath, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      if ((res.headers['content-type'] ?? '').includes('text/event-stream')) {
        resolve({ status: res.statusCode!, headers: res.headers, body: '' });
        req.destroy();
        return;
      }
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** sha256 over every path (relative), type and file content under `dir`: equal hashes = nothing changed. */
export function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      h.update(`${path.relative(dir, p)}\0${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'}\0`);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) h.update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

export interface Route {
  method: string;
  url: string;
}

/** The routes the app really registered (recorded from Fastify's onRoute), deduplicated. */
export function registeredRoutes(app: NestFastifyApplication): Route[] {
  const table = routeTableOf(app);
  if (!table) throw new Error('no route table recorded for this app');
  const seen = new Set<string>();
  return table.registered.filter((r) => {
    const key = `${r.method} ${r.url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Replaces `:name` parameters by `ids[name]` (else `x`) and `*` by `index.html`. */
export function fillRoute(url: string, ids: Record<string, string>): string {
  return url
    .split('/')
    .map((seg) => (seg.startsWith(':') ? (ids[seg.slice(1)] ?? 'x') : seg === '*' ? 'index.html' : seg))
    .join('/');
}

const pct = (ch: string) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
const pctLower = (ch: string) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;

/**
 * Spellings of one path that a lax check might not recognise as the route while the router does:
 * percent-encoded letters, double slashes, dot segments (plain and encoded), case variants,
 * encoded slashes and a trailing slash.
 */
export function spellings(p: string): string[] {
  const segs = p.split('/'); // ['', 'api', 'v1', …]
  const first = segs[1] ?? '';
  const rest = segs.slice(2).join('/');
  const out = [
    p,
    `/${pctLower(first[0])}${first.slice(1)}/${rest}`,
    `/${first.slice(0, 1)}${pct(first[1] ?? 'x')}${first.slice(2)}/${rest}`,
    `/${[...first].map(pct).join('')}/${rest}`,
    `/${segs.slice(1).map((s) => [...s].map(pctLower).join('')).join('/')}`,
    `/${p}`,
    `/${first}//${rest}`,
    `/${first}/./${rest}`,
    `/${first}/zz/../${rest}`,
    `/ui/../${first}/${rest}`,
    `/ui/%2e%2e/${first}/${rest}`,
    `/assets/%2E%2E/${first}/${rest}`,
    `/${first.toUpperCase()}/${rest}`,
    `/${segs.slice(1).map((s) => s.charAt(0).toUpperCase() + s.slice(1)).join('/')}`,
    `/${first}%2F${rest.replace(/\//g, '%2F')}`,
    `${p}/`,
  ];
  return [...new Set(out)];
}
