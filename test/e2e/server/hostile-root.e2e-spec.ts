import * as fs from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CONDUCTOR, startCli, type StartedCli } from '../../utils/cli';
import { buildHostileRoot, HOSTILE_PROJECT as P, HOSTILE_TASK as T } from '../../utils/hostile-root';
import { announcedPort } from '../../utils/ports';
import { waitFor } from '../../utils/wait';

/*
 * Issue #29 acceptance, against the real built server process: a root with symlinks out of it,
 * FIFOs in place of run files, /dev/zero links, corrupt records of every kind and a 200,000-message bus. Every listing route
 * answers 2xx within 1 s, the server stays under 300 MB RSS and health answers throughout.
 */
const LISTINGS = [
  '/api/projects',
  `/api/projects/${P}`,
  `/api/projects/${P}/stats`,
  `/api/projects/${P}/runs/flat`,
  `/api/projects/${P}/tasks`,
  `/api/projects/${P}/tasks/${T}`,
  `/api/projects/${P}/tasks/${T}/runs`,
  `/api/projects/${P}/messages`,
  `/api/projects/${P}/tasks/${T}/messages`,
  `/api/v1/messages?project_id=${P}`,
  `/api/v1/messages?project_id=${P}&task_id=${T}`,
  '/api/v1/runs',
  '/api/v1/tasks',
  '/api/v1/status',
  '/api/v1/usage',
  '/api/v1/questions',
  // the corrupt records' projects (HOSTILE_ENTRIES.corruptRecords)
  '/api/projects/bad/tasks',
  '/api/projects/bad/runs/flat',
  '/api/projects/bad/stats',
  '/api/projects/bad/tasks/task-20260101-120000-mixed',
  '/api/projects/bad/tasks/task-20260101-120000-garbage/runs',
];
/** The run files hostile-root.ts planted: /dev/zero links, FIFOs, symlinks out of the root. */
const BAD_FILES: Record<string, string[]> = {
  '20260101-1200000000-900-1': ['stdout', 'stderr', 'output'],
  '20260101-1200000000-900-2': ['stdout', 'stderr', 'output', 'prompt'],
  '20260101-1200000000-900-3': ['stdout', 'stderr', 'prompt'],
};

let authorization = '';

function get(base: string, url: string): Promise<{ status: number; bytes: number; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${url}`, { headers: { authorization } }, (res) => {
      let bytes = 0;
      if ((res.headers['content-type'] ?? '').includes('text/event-stream')) {
        req.destroy();
        resolve({ status: res.statusCode!, bytes: 0, ms: Date.now() - started });
        return;
      }
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode!, bytes, ms: Date.now() - started }));
    });
    req.on('error', reject);
  });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describe('a hostile runs root does not take the server down (issue #29 acceptance)', () => {
  let dir: string;
  let server: StartedCli;
  let base: string;
  beforeAll(async () => {
    if (!fs.existsSync(path.join(__dirname, '..', '..', '..', 'dist'))) throw new Error('server not built: run `npm run build`');
    dir = fs.mkdtempSync(path.join(tmpdir(), 'hostile-root-'));
    const root = path.join(dir, 'runs');
    fs.mkdirSync(root);
    buildHostileRoot(root, { busMessages: 200_000 });
    expect(fs.statSync(path.join(root, P, 'PROJECT-MESSAGE-BUS.md')).size).toBeGreaterThan(30 * 1024 * 1024);
    server = startCli(['--port', '0', '--root', root, '--disable-task-start'], { bin: CONDUCTOR, env: { ...process.env, HOME: dir }, cwd: dir, timeoutMs: 600_000 });
    const port = await waitFor('the server to announce its port', () => announcedPort(server.stdout()), 60_000);
    base = `http://127.0.0.1:${port}`;
    // the default start: no key configured, so the server generated one in the user's state folder
    authorization = `Bearer ${fs.readFileSync(path.join(dir, '.run-agent', 'api-key'), 'utf8').trim()}`;
  }, 300_000);
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.done;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers every listing route 2xx within 1 s, refuses the bad files, stays under 300 MB, and health answers throughout', async () => {
    const pid = server.child.pid!;
    let peak = rssMb(pid);
    const healthStatuses: number[] = [];
    let busy = true;
    // health, polled for as long as the burst below is in flight: each poll must answer
    const healthLoop = (async () => {
      while (busy) {
        healthStatuses.push((await get(base, '/api/v1/health')).status);
        peak = Math.max(peak, rssMb(pid));
      }
    })();
    // the hostile files: refused (403/404), never hanging the server
    const fileUrls = Object.entries(BAD_FILES).flatMap(([r, names]) => names.flatMap((n) => [`/api/projects/${P}/tasks/${T}/runs/${r}/file?name=${n}`, `/api/projects/${P}/tasks/${T}/runs/${r}/stream?name=${n}`]));
    fileUrls.push(`/api/projects/${P}/tasks/${T}/file`, `/api/projects/${P}/tasks/task-20260101-120000-elsewhere/runs`, '/api/projects/linked-project');
    // four rounds of every listing at once, plus every bad file
    const burst = await Promise.all([...[1, 2, 3, 4].flatMap(() => LISTINGS), ...fileUrls].map(async (url) => [url, (await get(base, url)).status] as const));
    busy = false;
    await healthLoop;
    for (const [url, status] of burst) {
      if (LISTINGS.includes(url)) expect([url, status >= 200 && status < 300]).toEqual([url, true]);
      else expect([url, [403, 404].includes(status)]).toEqual([url, true]);
    }
    expect(healthStatuses.length).toBeGreaterThan(0);
    expect(healthStatuses.every((s) => s === 200)).toBe(true);
    // warm now: each listing on its own within the 1 s
    for (const url of LISTINGS) {
      const res = await get(base, url);
      expect([url, res.status < 300, res.ms < 1000]).toEqual([url, true, true]);
      peak = Math.max(peak, rssMb(pid));
    }
    expect((await get(base, '/api/v1/health')).status).toBe(200);
    expect(peak).toBeLessThan(300);
  }, 300_000);

  it('shows a FIFO or /dev/zero link in place of run-info.yaml as a corrupt run', async () => {
    const res = await fetch(`${base}/api/projects/${P}/tasks/${T}/runs`, { headers: { authorization } });
    const body = (await res.json()) as { items: { id: string; status: string; corrupt_reason?: string }[] };
    const byId = new Map(body.items.map((r) => [r.id, r]));
    for (const id of ['20260101-1200000000-900-5', '20260101-1200000000-900-6']) {
      expect([id, byId.get(id)?.status]).toEqual([id, 'corrupt']);
      expect(byId.get(id)?.corrupt_reason).toMatch(/not a regular file|outside the runs root/);
    }
  });
});
