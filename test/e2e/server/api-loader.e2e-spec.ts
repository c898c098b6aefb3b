/** How the CLI finds the separately built API (dist/apps/api/…/server.js). Needs `npx nest build api`. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiServerEntry, loadApiServer } from '../../../apps/cli/src/commands/server/serve/api-loader';
import { packageRoot } from '../../../apps/cli/src/version';
import { REPO } from './helpers';

describe('API loader of serve', () => {
  it('finds the package root and the built API server module', () => {
    expect(packageRoot(join(REPO, 'apps', 'cli', 'src'))).toBe(REPO);
    const entry = apiServerEntry(REPO);
    expect(entry).toBe(join(REPO, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js'));
    expect(existsSync(entry)).toBe(true);
    expect(typeof loadApiServer(entry).startServer).toBe('function');
  });

  it('explains how to build the API when its build is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'no-api-'));
    try {
      const missing = join(dir, 'server.js');
      expect(() => loadApiServer(missing)).toThrow(`the API server is not built (missing ${missing}); run \`npx nest build api\` (or \`npm run build\`)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
