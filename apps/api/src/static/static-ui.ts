import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The package root (where package.json named conductor-loop lives), found from this file. */
export function packageRoot(from = __dirname): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      try {
        if (JSON.parse(fs.readFileSync(pkg, 'utf8')).name === 'conductor-loop') return dir;
      } catch {
        // keep walking
      }
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * api.md §7.3: the first frontend/dist holding index.html, relative to the package root, then the
 * cwd. An explicit dir (ServerOptions.uiDir, else the CONDUCTOR_UI_DIR env var: a custom UI build,
 * e.g. upstream's React dashboard) is used alone (no build there → the built-in page).
 */
export function findUiDir(explicit: string | undefined = process.env.CONDUCTOR_UI_DIR?.trim() || undefined): string | undefined {
  if (explicit !== undefined) return fs.existsSync(path.join(explicit, 'index.html')) ? path.resolve(explicit) : undefined;
  const pkg = packageRoot();
  const cwd = process.cwd();
  const candidates = [
    pkg && path.join(pkg, 'frontend', 'dist'),
    path.join(cwd, 'frontend', 'dist'),
    path.join(cwd, '..', 'frontend', 'dist'),
    path.join(cwd, '..', '..', 'frontend', 'dist'),
  ].filter((c): c is string => !!c);
  return candidates.find((c) => fs.existsSync(path.join(c, 'index.html')));
}

const BUILTIN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>conductor</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>conductor is running</h1>
<p>The web dashboard has not been built. Build it with <code>npm run build:ui</code>
(it is written to <code>frontend/dist</code>) and reload this page.</p>
<p>The REST API is available under <a href="/api/v1/status">/api/v1/</a> and <a href="/api/projects">/api/projects</a>.</p>
</body></html>
`;

/** The dashboard's icon (a conductor's baton on the project's blue), served as /favicon.ico. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f55c4"/>' +
  '<path d="M8 24 L22 10" stroke="#fff" stroke-width="3" stroke-linecap="round"/><circle cx="23.5" cy="8.5" r="3" fill="#fff"/></svg>';

/** Serves the dashboard at `/` and `/ui/` (`/ui` → 301 `/ui/`), or a built-in page when no build exists. */
export function registerStaticUi(app: NestFastifyApplication, uiDir: string | undefined): string {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.get('/ui', (_req, reply) => reply.redirect('/ui/', 301));
  // Browsers ask for /favicon.ico on every load, whether or not the page names an icon.
  fastify.get('/favicon.ico', (_req, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG));
  if (uiDir) {
    // loaded only when there is a build to serve (~30 modules)
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fastifyStatic = (require('@fastify/static') as typeof import('@fastify/static')).default;
    void fastify.register(fastifyStatic, { root: uiDir, prefix: '/', wildcard: true, index: ['index.html'] });
    void fastify.register(fastifyStatic, { root: uiDir, prefix: '/ui/', wildcard: true, index: ['index.html'], decorateReply: false });
    return uiDir;
  }
  const page = (_req: unknown, reply: { type: (t: string) => { send: (b: string) => unknown } }) => reply.type('text/html; charset=utf-8').send(BUILTIN_PAGE);
  fastify.get('/', page);
  fastify.get('/ui/', page);
  return 'built-in page';
}
