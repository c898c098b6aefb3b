/** How the CLI finds the separately built API (dist/apps/api/…/boot/serve.js). Needs `npx nest build api`. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiServerBundle, apiServerEntry, apiServerFile, loadApiServer } from '../../../apps/cli/src/commands/server/serve/api-loader';
import { packageRoot } from '../../../apps/cli/src/version';
import { REPO } from './helpers';

describe('API loader of serve', () => {
  it('finds the package root and the built API server module', () => {
    expect(packageRoot(join(REPO, 'apps', 'cli', 'src'))).toBe(REPO);
    const entry = apiServerEntry(REPO);
    expect(entry).toBe(join(REPO, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'serve.js'));
    expect(existsSync(entry)).toBe(true);
    const api = loadApiServer(entry);
    expect([typeof api.runServe, typeof api.serveMain]).toEqual(['function', 'function']);
  });

  it('explains how to build the API when its build is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'no-api-'));
    try {
      const missing = join(dir, 'serve.js');
      expect(() => loadApiServer(missing)).toThrow(`the API server is not built (missing ${missing}); run \`npx nest build api\` (or \`npm run build\`)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('picks the API bundle only when it is at least as new as the tsc build, and not under CONDUCTOR_API_UNBUNDLED', () => {
    const dir = mkdtempSync(join(tmpdir(), 'api-pick-'));
    const saved = process.env.CONDUCTOR_API_UNBUNDLED;
    try {
      const entry = apiServerEntry(dir);
      const bundle = apiServerBundle(entry);
      expect(bundle).toBe(join(dir, 'dist', 'apps', 'api', 'bundle', 'server.js'));
      for (const f of [entry, bundle]) {
        mkdirSync(join(f, '..'), { recursive: true });
        writeFileSync(f, '');
      }
      delete process.env.CONDUCTOR_API_UNBUNDLED;
      utimesSync(entry, 1_000_000, 1_000_000);
      utimesSync(bundle, 1_000_100, 1_000_100);
      expect(apiServerFile(entry)).toBe(bundle);
      utimesSync(entry, 1_000_200, 1_000_200); // a bare `nest build api` after the last bundle
      expect(apiServerFile(entry)).toBe(entry);
      utimesSync(entry, 1_000_000, 1_000_000);
      process.env.CONDUCTOR_API_UNBUNDLED = '1';
      expect(apiServerFile(entry)).toBe(entry);
      delete process.env.CONDUCTOR_API_UNBUNDLED;
      rmSync(bundle);
      expect(apiServerFile(entry)).toBe(entry);
    } finally {
      if (saved === undefined) delete process.env.CONDUCTOR_API_UNBUNDLED;
      else process.env.CONDUCTOR_API_UNBUNDLED = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
