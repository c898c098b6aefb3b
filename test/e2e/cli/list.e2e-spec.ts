import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../utils/cli';
import { RunInfo, writeDependsOn, writeDone, writeRunInfo, ZERO_TIME } from '@app/storage';

const T_DONE = 'task-20260101-000000-done';
const T_FAIL = 'task-20260101-000000-fail';
const T_STALE = 'task-20260101-000000-stale';
const T_BLOCKED = 'task-20260101-000000-wait';

async function runAgent(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCli(args, { env, cwd });
  return { code, stdout, stderr };
}

async function deadPid(): Promise<number> {
  const child = spawn('true', [], { stdio: 'ignore' });
  await new Promise((r) => child.on('close', r));
  return child.pid as number;
}

describe('run-agent list (built CLI)', () => {
  let tmp: string;
  let root: string;
  let env: NodeJS.ProcessEnv;

  function run(task: string, runId: string, o: Partial<RunInfo>): string {
    const dir = join(root, 'proj', task, 'runs', runId);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'run-info.yaml');
    writeRunInfo(path, {
      version: 1, run_id: runId, project_id: 'proj', task_id: task, agent: 'claude', pid: 0, pgid: 0,
      start_time: new Date('2026-01-01T10:00:00Z'), end_time: new Date('2026-01-01T10:01:05Z'), exit_code: 0,
      status: 'completed', agent_version: '', ...o,
    });
    return path;
  }

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'list-e2e-'));
    root = join(tmp, 'root');
    const home = join(tmp, 'home');
    mkdirSync(home);
    env = { PATH: process.env.PATH, HOME: home, TZ: 'UTC' };
    run(T_DONE, '20260101-1000000000-1-1', {});
    writeDone(join(root, 'proj', T_DONE));
    run(T_FAIL, '20260101-1000000000-1-1', {});
    run(T_FAIL, '20260101-1000000000-1-2', { status: 'failed', exit_code: 1, end_time: new Date('2026-01-01T11:02:03Z') });
    mkdirSync(join(root, 'proj', T_FAIL, 'runs', '20260101-1000000000-1-3')); // no run-info: ignored for latest
    const pid = await deadPid();
    run(T_STALE, '20260101-1000000000-1-1', { status: 'running', pid, pgid: pid, exit_code: -1, end_time: ZERO_TIME });
    mkdirSync(join(root, 'proj', T_BLOCKED));
    writeDependsOn(join(root, 'proj', T_BLOCKED), [T_FAIL, T_DONE]);
    mkdirSync(join(root, 'other'));
    for (const t of [T_DONE, T_FAIL, T_STALE, T_BLOCKED]) {
      utimesSync(join(root, 'proj', t), new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'));
    }
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('lists projects (text and JSON) and refuses a missing root', async () => {
    expect(await runAgent(['list', '--root', root], env, tmp)).toEqual({ code: 0, stdout: 'other\nproj\n', stderr: '' });
    const json = await runAgent(['list', '--root', root, '--json'], env, tmp);
    expect(json.stdout).toBe('{\n  "projects": [\n    "other",\n    "proj"\n  ]\n}\n');
    const missing = await runAgent(['list', '--root', join(tmp, 'nope')], env, tmp);
    expect(missing).toEqual({ code: 0, stdout: '', stderr: `no runs yet in ${join(tmp, 'nope')} (start one with \`run-agent task\`)\n` });
    expect(await runAgent(['list', '--root', join(tmp, 'nope'), '--json'], env, tmp)).toEqual({ code: 0, stdout: '{\n  "projects": null\n}\n', stderr: '' });
    mkdirSync(join(tmp, 'empty-root'));
    expect((await runAgent(['list', '--root', join(tmp, 'empty-root')], env, tmp)).stderr).toMatch(/^no runs yet in /);
  });

  it('lists tasks with latest status, DONE, blockers, and heals the stale running run', async () => {
    const res = await runAgent(['list', '--root', root, '--project', 'proj'], env, tmp);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe(
      [
        'TASK_ID                     RUNS  LATEST_STATUS  DONE  BLOCKED_BY                 LAST_ACTIVITY',
        'task-20260101-000000-done   1     completed      DONE  -                          2026-01-02 03:04',
        'task-20260101-000000-fail   3     failed         -     -                          2026-01-02 03:04',
        'task-20260101-000000-stale  1     failed         -     -                          2026-01-02 03:04',
        'task-20260101-000000-wait   0     blocked        -     task-20260101-000000-fail  2026-01-02 03:04',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await runAgent(['list', '--root', root, '--project', 'proj', '--json'], env, tmp)).stdout);
    expect(json.tasks[3]).toEqual({
      task_id: T_BLOCKED, runs: 0, latest_status: 'blocked', done: false, last_activity: '2026-01-02T03:04:05Z',
      depends_on: [T_FAIL, T_DONE], blocked_by: [T_FAIL],
    });
    expect(json.tasks[2]).toEqual({ task_id: T_STALE, runs: 1, latest_status: 'failed', done: false, last_activity: '2026-01-02T03:04:05Z' });
  });

  it('filters tasks by --status and refuses unknown filters (exit 2, did-you-mean)', async () => {
    const done = await runAgent(['list', '--root', root, '--project', 'proj', '--status', 'done', '--json'], env, tmp);
    expect(JSON.parse(done.stdout).tasks.map((t: { task_id: string }) => t.task_id)).toEqual([T_DONE]);
    const running = await runAgent(['list', '--root', root, '--project', 'proj', '--status', 'running', '--json'], env, tmp);
    expect(running.stdout).toBe('{\n  "tasks": null\n}\n');
    const odd = await runAgent(['list', '--root', root, '--project', 'proj', '--status', 'weird', '--json'], env, tmp);
    expect([odd.code, odd.stdout]).toEqual([2, '']);
    expect(JSON.parse(odd.stderr).error.message).toMatch(/^invalid --status "weird": must be one of running, /);
    const typo = await runAgent(['list', '--root', root, '--project', 'proj', '--status', 'runing'], env, tmp);
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringMatching(/^Error: invalid --status "runing" \(did you mean "running"\?\)/)]);
  });

  it('lists the runs of a task', async () => {
    const res = await runAgent(['list', '--root', root, '--project', 'proj', '--task', T_FAIL], env, tmp);
    expect(res.stdout).toBe(
      [
        'RUN_ID                   STATUS     EXIT_CODE  STARTED              DURATION  AGENT',
        '20260101-1000000000-1-1  completed  0          2026-01-01 10:00:00  1m5s      claude',
        '20260101-1000000000-1-2  failed     1          2026-01-01 10:00:00  1h2m3s    claude',
        '20260101-1000000000-1-3  unknown    -                                         -',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await runAgent(['list', '--root', root, '--project', 'proj', '--task', T_STALE, '--json'], env, tmp)).stdout);
    expect(json.runs).toEqual([{ run_id: '20260101-1000000000-1-1', status: 'failed', exit_code: -1, agent: 'claude', started: '2026-01-01 10:00:00', duration: expect.stringMatching(/^\d+h\d+m\d+s$/) }]);
  });

  it('adds activity columns with --activity', async () => {
    const res = await runAgent(['list', '--root', root, '--project', 'proj', '--activity'], env, tmp);
    expect(res.code).toBe(0);
    const [header, first] = res.stdout.split('\n');
    expect(header.split(/\s{2,}/)).toEqual([
      'TASK_ID', 'RUNS', 'LATEST_STATUS', 'DONE', 'BLOCKED_BY', 'LAST_ACTIVITY', 'LAST_BUS', 'LAST_OUTPUT', 'MEANINGFUL_AGE', 'DRIFT_RISK', 'DRIFT_REASON',
    ]);
    expect(first).toMatch(/task is not running$/);
    const json = JSON.parse((await runAgent(['list', '--root', root, '--project', 'proj', '--activity', '--json'], env, tmp)).stdout);
    expect(json.tasks[0].activity).toMatchObject({ analysis_drift_risk: false, drift_threshold_seconds: 1200, drift_reason: 'task is not running' });
  });

  it('rejects bad flags with a one-line usage error and touches nothing', async () => {
    expect(await runAgent(['list', '--root', root, '--task', T_FAIL], env, tmp)).toEqual({ code: 2, stdout: '', stderr: 'Error: --task requires --project\n' });
    const escape = await runAgent(['list', '--root', root, '--project', '../etc'], env, tmp);
    expect(escape.code).toBe(2);
    expect(escape.stderr).toBe('Error: invalid project ID "../etc": must not contain path separators (projects cannot be nested)\n');
    const taskEscape = await runAgent(['list', '--root', root, '--project', 'proj', '--task', '..'], env, tmp);
    expect(taskEscape.code).toBe(2);
    const noRuns = await runAgent(['list', '--root', root, '--project', 'proj', '--task', T_BLOCKED], env, tmp);
    expect(noRuns).toEqual({ code: 1, stdout: '', stderr: `Error: no runs found for project proj task ${T_BLOCKED}\n` });
    const noProject = await runAgent(['list', '--root', root, '--project', 'ghost'], env, tmp);
    expect([noProject.code, noProject.stderr]).toEqual([2, `Error: unknown project "ghost" in runs root ${root}\n`]);
  });

  it('resolves the root from CONDUCTOR_ROOT, then ./config.yaml storage.runs_dir, without creating home files', async () => {
    expect((await runAgent(['list'], { ...env, CONDUCTOR_ROOT: root }, tmp)).stdout).toBe('other\nproj\n');
    const cwd = join(tmp, 'cfgdir');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'config.yaml'), `storage:\n  runs_dir: ${root}\n`);
    expect((await runAgent(['list'], env, cwd)).stdout).toBe('other\nproj\n');
    writeFileSync(join(cwd, 'config.yaml'), 'storage: [broken\n');
    const broken = await runAgent(['list'], env, cwd);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^Error: resolve runs dir: \/.*config\.yaml:2:1: storage: YAML syntax error: [^\n]+\n$/);
    const bare = await runAgent(['list'], env, tmp);
    expect(bare).toEqual({ code: 0, stdout: '', stderr: `no runs yet in ${join(tmp, 'home', '.run-agent', 'runs')} (start one with \`run-agent task\`)\n` });
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(join(tmp, 'home'))).toEqual([]);
  });

  it('explains every flag in --help', async () => {
    const help = await runAgent(['list', '--help'], env, tmp);
    expect(help.code).toBe(0);
    for (const flag of ['--root', '--project', '--task', '--status', '--json', '--activity', '--drift-after']) expect(help.stdout).toContain(flag);
  });
});
