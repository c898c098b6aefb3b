// `npm start` rebuilds what is missing or older than its sources (issue #13 item 7).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const { staleBuilds } = require('../../../scripts/stale-build.js') as { staleBuilds: (root: string) => string[] };

describe('staleBuilds', () => {
  let root: string;
  const touch = (rel: string, at: number) => {
    const file = join(root, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, 'x');
    utimesSync(file, at, at);
  };
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'stale-'));
    touch('apps/api/src/server.ts', 1000);
    touch('apps/cli/src/main.ts', 1000);
    touch('libs/storage/src/index.ts', 1000);
    touch('frontend/src/App.tsx', 1000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lists every build that is missing', () => {
    expect(staleBuilds(root)).toEqual(['api', 'cli', 'ui']);
  });

  it('lists only the builds older than a changed source', () => {
    touch('dist/apps/api/apps/api/src/server.js', 2000);
    touch('dist/apps/cli/apps/cli/src/main.js', 2000);
    touch('frontend/dist/index.html', 2000);
    expect(staleBuilds(root)).toEqual([]);
    touch('apps/cli/src/main.ts', 3000);
    expect(staleBuilds(root)).toEqual(['cli']);
    touch('libs/storage/src/index.ts', 3000);
    expect(staleBuilds(root)).toEqual(['api', 'cli']);
    touch('frontend/src/App.tsx', 3000);
    expect(staleBuilds(root)).toEqual(['api', 'cli', 'ui']);
  });
});
