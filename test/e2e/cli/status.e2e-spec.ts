import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, writeDependsOn, writeDone } from '@app/storage';
import { deadPid, P, post, running, Sandbox, T1, T2, T3, T4, T5, writeRun } from './inspect-helpers';

// T1 completed, T2 running (live pid), T3 stale "running" (dead pid), T4 DONE without runs,
// T5 blocked by T2.
describe('run-agent status', () => {
  let sb: Sandbox;
  let stalePath: string;

  beforeEach(async () => {
    sb = new Sandbox();
    writeRun(sb.root, P, T1, '20260101-1200000000-100-1', { status: 'failed', exit_code: 1 });
    writeRun(sb.root, P, T1, '20260101-1300000000-100-1', { status: 'completed', exit_code: 0 });
    writeRun(sb.root, P, T2, '20260101-1200000000-200-1', running(sb.livePid()));
    stalePath = join(writeRun(sb.root, P, T3, '20260101-1200000000-300-1', running(deadPid())), 'run-info.yaml');
    mkdirSync(join(sb.root, P, T4), { recursive: true });
    writeDone(join(sb.root, P, T4));
    mkdirSync(join(sb.root, P, T5), { recursive: true });
    writeDependsOn(join(sb.root, P, T5), [T2]);
    const old = new Date(Date.now() - 3_600_000);
    await post(join(sb.root, P, T2, 'TASK-MESSAGE-BUS.md'), [
      { type: 'FACT', project_id: P, task_id: T2, run_id: '', body: 'found the   bug', ts: old },
      { type: 'PROGRESS', project_id: P, task_id: T2, run_id: '', body: 'still\nworking' },
    ]);
  });

  afterEach(() => sb.cleanup());

  it('prints a table with the newest run of every task, reconciling dead runs', async () => {
    const r = await sb.run(['status', '--root', sb.root, '--project', P]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['TASK_ID', 'STATUS', 'EXIT_CODE', 'LATEST_RUN', 'DONE', 'PID_ALIVE', 'BLOCKED_BY']);
    const rows = Object.fromEntries(lines.slice(1).map((l) => [l.split(/\s+/)[0], l.split(/\s+/).slice(1)]));
    expect(rows[T1]).toEqual(['completed', '0', '20260101-1300000000-100-1', 'false', 'false', '-']);
    expect(rows[T2]).toEqual(['running', '-', '20260101-1200000000-200-1', 'false', 'true', '-']); // #12: no exit code while running
    expect(rows[T3]).toEqual(['failed', '-1', '20260101-1200000000-300-1', 'false', 'false', '-']);
    expect(rows[T4]).toEqual(['done', '-', '-', 'true', '-', '-']);
    expect(rows[T5]).toEqual(['blocked', '-', '-', 'false', '-', T2]);
    expect(readRunInfo(stalePath).status).toBe('failed');
  });

  it('--json gives typed fields, null where absent', async () => {
    const r = await sb.run(['status', '--root', sb.root, '--project', P, '--json']);
    expect(r.code).toBe(0);
    const tasks = (JSON.parse(r.stdout) as { tasks: Record<string, unknown>[] }).tasks;
    expect(tasks.map((t) => t.task_id)).toEqual([T1, T2, T4, T5, T3]); // sorted by name
    expect(tasks[1]).toEqual({ task_id: T2, status: 'running', exit_code: null, latest_run: '20260101-1200000000-200-1', done: false, pid_alive: true });
    expect(tasks[2]).toEqual({ task_id: T4, status: 'done', exit_code: null, latest_run: '', done: true, pid_alive: null });
    expect(tasks[3]).toMatchObject({ status: 'blocked', depends_on: [T2], blocked_by: [T2] });
  });

  it('--concise prints tab-separated rows without a header; --status filters', async () => {
    const r = await sb.run(['status', '--root', sb.root, '--project', P, '--concise', '--status', 'active']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${T2}\trunning\t-\t20260101-1200000000-200-1\tfalse\ttrue\n`);
    const none = await sb.run(['status', '--root', sb.root, '--project', P, '--concise', '--status', 'pending']);
    expect(none.stdout).toBe(`No status rows matched --status "pending" in project ${P}.\n`);
    const done = await sb.run(['status', '--root', sb.root, '--project', P, '--json', '--status', 'done']);
    expect((JSON.parse(done.stdout) as { tasks: { task_id: string }[] }).tasks.map((t) => t.task_id)).toEqual([T4]);
  });

  it('--activity reports the latest bus message, output activity and drift risk', async () => {
    writeFileSync(join(sb.root, P, T2, 'runs', '20260101-1200000000-200-1', 'agent-stdout.txt'), 'x\n');
    const r = await sb.run(['status', '--root', sb.root, '--project', P, '--task', T2, '--activity', '--drift-after', '30m', '--json']);
    expect(r.code).toBe(0);
    const [row] = (JSON.parse(r.stdout) as { tasks: { activity: Record<string, unknown> }[] }).tasks;
    expect(row.activity).toMatchObject({
      latest_bus_message: { type: 'PROGRESS', body_preview: 'still working' },
      analysis_drift_risk: true,
      drift_threshold_seconds: 1800,
    });
    expect(row.activity.latest_output_activity_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(row.activity.meaningful_signal_age_seconds).toBeGreaterThanOrEqual(3600);
    expect(String(row.activity.drift_reason)).toMatch(/^no meaningful bus signal for 1h0m\d+s$/);

    const table = await sb.run(['status', '--root', sb.root, '--project', P, '--task', T2, '--activity']);
    expect(table.stdout.split('\n')[0].split(/\s+/).slice(-5)).toEqual(['LAST_BUS', 'LAST_OUTPUT', 'MEANINGFUL_AGE', 'DRIFT_RISK', 'DRIFT_REASON']);
    expect(table.stdout.split('\n')[1]).toContain(' PROGRESS still working');
    expect(table.stdout.split('\n')[1]).toContain(' risk ');

    const concise = await sb.run(['status', '--root', sb.root, '--project', P, '--task', T1, '--activity', '--concise']);
    expect(concise.stdout.split('\t')).toEqual([T1, 'completed', '0', '20260101-1300000000-100-1', 'false', 'false', '-', 'false', '-', '-', '-', '-\n']);
  });

  it('shows a run folder without run-info as unknown, or queued when it waits for a slot', async () => {
    const T6 = 'task-20260101-120000-zeta';
    mkdirSync(join(sb.root, P, T6, 'runs', '20260101-1200000000-600-1'), { recursive: true });
    const unknown = await sb.run(['status', '--root', sb.root, '--project', P, '--task', T6, '--concise']);
    expect(unknown.stdout).toBe(`${T6}\tunknown\t-\t20260101-1200000000-600-1\tfalse\t-\n`);
    mkdirSync(join(sb.root, '.conductor', 'queue'), { recursive: true });
    writeFileSync(join(sb.root, '.conductor', 'queue', '20260101-1200000000-600-1'), '1\n');
    const queued = await sb.run(['status', '--root', sb.root, '--project', P, '--status', 'queued', '--concise']);
    expect(queued.stdout).toBe(`${T6}\tqueued\t-\t20260101-1200000000-600-1\tfalse\t-\n`);
  });

  it('takes the project from JRUN_PROJECT_ID', async () => {
    const r = await sb.run(['status', '--root', sb.root, '--task', T1, '--concise'], { env: { JRUN_PROJECT_ID: P } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${T1}\\tcompleted\\t`));
  });

  it('rejects bad input with one line and exit 2 / 1, touching nothing', async () => {
    const before = readFileSync(stalePath, 'utf8');
    const both = await sb.run(['status', '--root', sb.root, '--project', P, '--json', '--concise']);
    expect([both.code, both.stderr]).toEqual([2, '{"error":{"code":"USAGE","message":"--concise cannot be used with --json"}}\n']);
    const noProject = await sb.run(['status', '--root', sb.root]);
    expect(noProject.code).toBe(2);
    const escape = await sb.run(['status', '--root', sb.root, '--project', P, '--task', '../../etc']);
    expect(escape.code).toBe(2); // #12: invalid input is a usage error everywhere
    expect(escape.stderr).toMatch(/^Error: invalid task ID "..\/..\/etc".*\n$/);
    const projectEscape = await sb.run(['status', '--root', sb.root, '--project', '..']);
    expect(projectEscape.code).toBe(2);
    const missing = await sb.run(['status', '--root', sb.root, '--project', 'nope']);
    expect([missing.code, missing.stderr]).toEqual([2, `Error: unknown project "nope" in runs root ${sb.root}\n`]);
    const badDrift = await sb.run(['status', '--root', sb.root, '--project', P, '--activity', '--drift-after', 'soon']);
    expect(badDrift.code).toBe(2);
    expect(readFileSync(stalePath, 'utf8')).toBe(before);
    expect(existsSync(join(sb.root, 'nope'))).toBe(false);
    expect(readdirSync(sb.home)).toEqual([]);
  });
});
