/**
 * `/metrics` of a real `conductor` process, checked by Prometheus' own linter (`promtool check
 * metrics`, Debian package `prometheus`), and its auth rule: the key when one is set, unless
 * `api.metrics_public`. Needs `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunningServer, startConductor, writeConfig, writeFakeAgent } from './helpers';

/** promtool's findings for a metrics text: its output lines (stdout and stderr) and exit status. */
function promtoolCheck(text: string): { status: number | null; lines: string[] } {
  const res = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (res.error) throw res.error;
  const lines = `${res.stdout}\n${res.stderr}`.split('\n').filter((l) => l.trim() !== '');
  return { status: res.status, lines };
}

/** The deprecated `_total` gauge aliases kept one release (metric-names.ts DEPRECATED_ALIASES). */
const DEPRECATED = ['conductor_active_runs_total', 'conductor_queued_runs_total'];

describe('/metrics of a running server (e2e, promtool)', () => {
  const key = 'metrics-k3y';
  let dir: string;
  let server: RunningServer;
  let publicServer: RunningServer | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metrics-promtool-'));
    const config = writeConfig(dir, writeFakeAgent(dir));
    // NODE_ENV=production: the process metrics are on, as in a deployment, and promtool sees them too
    server = await startConductor(dir, join(dir, 'runs'), config, { CONDUCTOR_API_KEY: key, NODE_ENV: 'production' });
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await publicServer?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes promtool check metrics; only the deprecated aliases draw the _total warning', async () => {
    await fetch(`${server.url}/api/v1/health`); // a request so the labelled request counter has a sample
    const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^# TYPE conductor_active_runs gauge$/m);
    expect(text).toMatch(/^# TYPE conductor_queued_runs gauge$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    for (const old of DEPRECATED) expect(text).toMatch(new RegExp(`^# HELP ${old} Deprecated: use ${old.replace(/_total$/, '')} `, 'm'));

    const withAliases = promtoolCheck(text);
    expect(withAliases.lines.sort()).toEqual(DEPRECATED.map((m) => `${m} non-counter metrics should not have "_total" suffix`).sort());

    // without the two aliases promtool finds nothing at all
    const aliasLine = new RegExp(`^(# (HELP|TYPE) )?(${DEPRECATED.join('|')})\\b.*\\n`, 'gm');
    const withoutAliases = text.replace(aliasLine, '');
    for (const old of DEPRECATED) expect(withoutAliases).not.toContain(old);
    expect(promtoolCheck(withoutAliases)).toEqual({ status: 0, lines: [] });
  });

  it('needs the key when one is set; api.metrics_public opens /metrics alone', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);

    const publicDir = join(dir, 'public');
    const config = writeConfig(dir, writeFakeAgent(dir), 'api:\n  metrics_public: true\n');
    publicServer = await startConductor(dir, join(publicDir, 'runs'), config, { CONDUCTOR_API_KEY: key });
    expect((await fetch(`${publicServer.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${publicServer.url}/api/projects`)).status).toBe(401);
  });
});
