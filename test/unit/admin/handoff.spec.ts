import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { handoffArgs, handoffBin, startNewServer } from '../../../apps/api/src/admin/handoff';
import { checkReplaceable, findInstallRoot, restore, siblingPath, stamp } from '../../../apps/api/src/admin/package-swap';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
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
    const port = await freePort();
    const healthUrl = `http://127.0.0.1:${port}/api/v1/health`;
    const good = path.join(tmp, 'good');
    fs.writeFileSync(good, `require('node:http').createServer((q, s) => s.end('{}')).listen(Number(process.env.CONDUCTOR_PORT), '127.0.0.1');`);
    const crash = path.join(tmp, 'crash');
    fs.writeFileSync(crash, 'process.exit(4);');
    const silent = path.join(tmp, 'silent');
    fs.writeFileSync(silent, 'setInterval(() => {}, 1000);');
    const env = { ...process.env, CONDUCTOR_PORT: String(port) };

    await expect(startNewServer({ bin: crash, args: [], env, cwd: tmp, healthUrl, timeoutMs: 5000 })).rejects.toThrow(
      `the new server exited (exit code 4) before answering ${healthUrl}`,
    );
    await expect(startNewServer({ bin: silent, args: [], env, cwd: tmp, healthUrl, timeoutMs: 300 })).rejects.toThrow(
      `the new server did not answer ${healthUrl} within 0.3s`,
    );
    const started = await startNewServer({ bin: good, args: [], env, cwd: tmp, healthUrl, timeoutMs: 5000 });
    try {
      expect(started.pid).toBeGreaterThan(0);
      expect(() => process.kill(started.pid, 0)).not.toThrow();
    } finally {
      process.kill(-started.pid, 'SIGKILL');
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
