import fastifyStatic from '@fastify/static';
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

/** Serves the dashboard at `/` and `/ui/` (`/ui` → 301 `/ui/`), or a built-in page when no build exists. */
export function registerStaticUi(app: NestFastifyApplication, uiDir: string | undefined): string {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.get('/ui', (_req, reply) => reply.redirect('/ui/', 301));
  if (uiDir) {
    void fastify.register(fastifyStatic, { root: uiDir, prefix: '/', wildcard: true, index: ['index.html'] });
    void fastify.register(fastifyStatic, { root: uiDir, prefix: '/ui/', wildcard: true, index: ['index.html'], decorateReply: false });
    return uiDir;
  }
  const page = (_req: unknown, reply: { type: (t: string) => { send: (b: string) => unknown } }) => reply.type('text/html; charset=utf-8').send(BUILTIN_PAGE);
  fastify.get('/', page);
  fastify.get('/ui/', page);
  return 'built-in page';
}
