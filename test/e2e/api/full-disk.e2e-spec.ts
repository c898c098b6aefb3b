import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';
import { itWithTmpfs, mountTmpfs, Tmpfs } from '../../utils/tmpfs';

const itMounted = itWithTmpfs('API full-disk (507) test');

/** Fills the file system holding `dir` until a write fails with ENOSPC. */
function fill(dir: string): void {
  const fd = fs.openSync(path.join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(4096, 120);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/** Issue #29: a full disk on an API post is 507 Insufficient Storage with one line, not a 500. */
describe('a full disk answers 507', () => {
  let fsys: Tmpfs | undefined;
  let api: TestApi | undefined;
  afterEach(async () => {
    await api?.close();
    // lazily: a watcher of the closed server may still hold the mount for a moment
    if (fsys) spawnSync('umount', ['-l', fsys.dir]);
    fsys?.release();
  });

  itMounted('message posts on a full runs root answer 507 INSUFFICIENT_STORAGE', async () => {
    const mounted = mountTmpfs('256k', 'api-full-');
    if (typeof mounted === 'string') throw new Error(mounted);
    fsys = mounted;
    const root = path.join(fsys.dir, 'runs');
    fs.mkdirSync(path.join(root, 'full'), { recursive: true });
    api = await createApiApp({ root, disableTaskStart: true });
    fill(fsys.dir);
    const cases: [string, object][] = [
      ['/api/projects/full/messages', { type: 'FACT', body: 'x'.repeat(8192) }],
      ['/api/v1/messages', { project_id: 'full', body: 'x'.repeat(8192) }],
    ];
    for (const [url, payload] of cases) {
      const res = await api.app.inject({ method: 'POST', url, payload });
      expect([url, res.statusCode]).toEqual([url, 507]);
      expect(res.json().error).toEqual({ code: 'INSUFFICIENT_STORAGE', message: expect.stringMatching(/^no space left on the device[^\n]*$/) });
    }
    fsys.resize('2m');
    const ok = await api.app.inject({ method: 'POST', url: '/api/projects/full/messages', payload: { type: 'FACT', body: 'fits' } });
    expect(ok.statusCode).toBe(201);
  });
});
