import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { handoffArgs, handoffBin, startNewServer } from '@app/self-update';
import { processAlive } from '../../utils/processes';
import { checkReplaceable, findInstallRoot, restore, siblingPath, stamp } from '@app/self-update';

/**
 * The health endpoint the hand-off polls, bound to port 0 for the whole test (no free-port race):
 * it answers 200 only while the child that wrote `readyFile` (its pid) is alive, 503 otherwise.
 */
async function healthEndpoint(readyFile: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    const pid = fs.existsSync(readyFile) ? Number(fs.readFileSync(readyFile, 'utf8')) : 0;
    res.writeHead(pid > 0 && processAlive(pid) ? 200 : 503).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/v1/health`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('self-update hand-off and package swap', () => {
  let tmp: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('keeps argv and env but pins the port we listen on', () => {
    expect(handoffArgs(['serve', '--port', '0', '--root', '/r'], { A: '1' }, 4321)).toEqual({ args: ['serve', '--port', '4321', '--root', '/r'], env: { A: '1', CONDUCTOR_PORT: '4321' } });
    expect(handoffArgs(['--port=0'], {}, 80).args).toEqual(['--port=80']);
    expect(handoffArgs(['serve'], { CONDUCTOR_PORT: '1' }, 99)).toEqual({ args: ['serve'], env: { CONDUCTOR_PORT: '99' } });
  });

  it('starts the same program it was started as', () => {
    expect(handoffBin('/opt/cl', '/usr/lib/node_modules/conductor-loop/bin/run-agent')).toBe('/opt/cl/bin/run-agent');
    expect(handoffBin('/opt/cl', '/usr/bin/conductor')).toBe('/opt/cl/bin/conductor');
    expect(handoffBin('/opt/cl', '/x/dist/main.js')).toBe('/opt/cl/bin/conductor');
  });

  it('waits for the new server to answer its health check, and reports one that exits or never answers', async () => {
    const ready = path.join(tmp, 'ready');
    const health = await healthEndpoint(ready);
    const healthUrl = health.url;
    const good = path.join(tmp, 'good');
    fs.writeFileSync(good, `require('node:fs').writeFileSync(${JSON.stringify(ready)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const crash = path.join(tmp, 'crash');
    fs.writeFileSync(crash, 'process.exit(4);');
    const silent = path.join(tmp, 'silent');
    fs.writeFileSync(silent, 'setInterval(() => {}, 1000);');
    const env = { ...process.env };

    try {
      await expect(startNewServer({ bin: crash, args: [], env, cwd: tmp, healthUrl, timeoutMs: 30_000 })).rejects.toThrow(
        `the new server exited (exit code 4) before answering ${healthUrl}`,
      );
      // The budget running out is the behaviour under test here, so a short one is right.
      await expect(startNewServer({ bin: silent, args: [], env, cwd: tmp, healthUrl, timeoutMs: 300 })).rejects.toThrow(
        `the new server did not answer ${healthUrl} within 0.3s`,
      );
      const started = await startNewServer({ bin: good, args: [], env, cwd: tmp, healthUrl, timeoutMs: 30_000 });
      try {
        expect(started.pid).toBeGreaterThan(0);
        expect(Number(fs.readFileSync(ready, 'utf8'))).toBe(started.pid);
        expect(() => process.kill(started.pid, 0)).not.toThrow();
      } finally {
        process.kill(-started.pid, 'SIGKILL');
      }
    } finally {
      await health.close();
    }
  });

  it('finds the install root from a built file, refuses git checkouts, and restores a backup', () => {
    const root = path.join(tmp, 'conductor-loop');
    fs.mkdirSync(path.join(root, 'dist', 'apps'), { recursive: true });
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'conductor-loop', version: '1.0.0' }));
    fs.writeFileSync(path.join(root, 'dist', 'package.json'), JSON.stringify({ name: 'something-else' }));
    expect(findInstallRoot(path.join(root, 'dist', 'apps'))).toBe(root);
    expect(() => findInstallRoot(tmp)).toThrow(`no conductor-loop package.json above ${tmp}`);
    expect(() => checkReplaceable(root)).not.toThrow();
    fs.mkdirSync(path.join(root, '.git'));
    expect(() => checkReplaceable(root)).toThrow(`${root} is a git checkout; self-update replaces installed packages only`);

    expect(stamp(new Date('2026-03-04T05:06:07.890Z'))).toBe('20260304050607');
    const backup = siblingPath(root, 'rollback-20260304050607');
    fs.renameSync(root, backup);
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'conductor-loop', version: '2.0.0' }));
    fs.mkdirSync(`${root}.failed-20260304050607`);
    const rejected = restore(root, backup, new Date('2026-03-04T05:06:07Z'));
    expect(rejected).toBe(`${root}.failed-20260304050607-1`);
    expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version).toBe('1.0.0');
    expect(JSON.parse(fs.readFileSync(path.join(rejected, 'package.json'), 'utf8')).version).toBe('2.0.0');
    expect(fs.existsSync(backup)).toBe(false);
  });
});
