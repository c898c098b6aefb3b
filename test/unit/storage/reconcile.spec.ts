import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  LivenessProbe,
  readRunInfo,
  readRunInfoReconciled,
  RunInfo,
  writeDone,
  writeRunInfo,
  ZERO_TIME,
} from '@app/storage';
import { deadPid } from './helpers/processes';
import { makeTempDir } from './helpers/temp';

describe('LivenessProbe', () => {
  const probe = new LivenessProbe();

  it('sees this process and its group as alive', () => {
    expect(probe.isPidAlive(process.pid)).toBe(true);
    expect(probe.isRunAlive({ pid: process.pid, pgid: 0 })).toBe(true);
  });

  it('sees an exited process as dead and rejects non-positive ids', async () => {
    const pid = await deadPid();
    expect(probe.isPidAlive(pid)).toBe(false);
    expect(probe.isGroupAlive(pid)).toBe(false);
    expect(probe.isRunAlive({ pid, pgid: pid })).toBe(false);
    expect(probe.isPidAlive(0)).toBe(false);
    expect(probe.isGroupAlive(-5)).toBe(false);
  });

  it('keeps a run alive while any member of its process group lives, even after the leader exits', async () => {
    // Leader starts a grandchild in its own group, prints its pid and exits.
    const leader = spawn('sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const pgid = leader.pid as number;
    let out = '';
    leader.stdout?.on('data', (d) => (out += d));
    await new Promise((resolve) => leader.on('close', resolve));
    const grandchild = Number(out.trim());
    try {
      expect(probe.isPidAlive(pgid)).toBe(false);
      expect(probe.isGroupAlive(pgid)).toBe(true);
      expect(probe.isRunAlive({ pid: pgid, pgid })).toBe(true);
    } finally {
      process.kill(grandchild, 'SIGKILL');
    }
  });

  it('judges a runner\'s own record (starting, in_process) by the runner\'s pid, not the group it shares with its caller', async () => {
    // a killed runner's sentinel: its pid is gone, its group (here this test's) lives on
    const pid = await deadPid();
    const ownGroup = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]);
    expect(probe.isGroupAlive(ownGroup)).toBe(true);
    expect(probe.isRunAlive({ pid, pgid: ownGroup })).toBe(true); // an agent's record: its group decides
    expect(probe.isRunAlive({ pid, pgid: ownGroup, starting: true })).toBe(false);
    expect(probe.isRunAlive({ pid, pgid: ownGroup, in_process: true })).toBe(false);
    expect(probe.isRunAlive({ pid: process.pid, pgid: 0, starting: true })).toBe(true);
  });
});

describe('reconciling reader', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let taskDir: string;
  let path: string;
  beforeEach(() => {
    tmp = makeTempDir();
    taskDir = join(tmp.dir, 'p', 'task-20260101-000000-abc');
    mkdirSync(join(taskDir, 'runs', 'r1'), { recursive: true });
    path = join(taskDir, 'runs', 'r1', 'run-info.yaml');
  });
  afterEach(() => tmp.cleanup());

  function info(overrides: Partial<RunInfo>): RunInfo {
    return {
      version: 1, run_id: 'r1', project_id: 'p', task_id: 'task-20260101-000000-abc', agent: 'claude',
      pid: 0, pgid: 0, start_time: new Date('2026-01-01T00:00:00Z'), end_time: ZERO_TIME, exit_code: -1,
      status: 'running', agent_version: '', ...overrides,
    };
  }

  it('rewrites a stale running run whose processes are gone to failed', async () => {
    const pid = await deadPid();
    writeRunInfo(path, info({ pid, pgid: pid, exit_code: 0 }));
    const got = readRunInfoReconciled(path);
    expect(got.status).toBe('failed');
    expect(got.exit_code).toBe(-1);
    expect(got.error_summary).toBe('reconciled stale running status: process is not alive');
    expect(got.end_time.getTime()).toBeGreaterThan(ZERO_TIME.getTime());
    const onDisk = readRunInfo(path);
    expect(onDisk.status).toBe('failed');
    expect(onDisk.error_summary).toBe('reconciled stale running status: process is not alive');
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('keeps an existing error summary and end time', async () => {
    const pid = await deadPid();
    const end = new Date('2026-01-01T01:00:00Z');
    writeRunInfo(path, info({ pid, pgid: pid, exit_code: 7, error_summary: 'own', end_time: end }));
    const got = readRunInfoReconciled(path);
    expect([got.status, got.exit_code, got.error_summary, got.end_time.toISOString()]).toEqual(['failed', 7, 'own', end.toISOString()]);
  });

  it('marks a dead run of a DONE task completed', async () => {
    const pid = await deadPid();
    writeRunInfo(path, info({ pid, pgid: pid }));
    writeDone(taskDir);
    const got = readRunInfoReconciled(path);
    expect(got.status).toBe('completed');
    expect(got.exit_code).toBe(0);
    expect(got.error_summary).toBe('reconciled stale running status: task DONE marker is present');
    expect(readRunInfo(path).status).toBe('completed');
  });

  it('heals a failed −1 run once DONE appears', () => {
    writeRunInfo(path, info({ status: 'failed', exit_code: -1, error_summary: 'reconciled stale running status: process is not alive', end_time: new Date() }));
    writeDone(taskDir);
    const got = readRunInfoReconciled(path);
    expect([got.status, got.exit_code, got.error_summary]).toEqual(['completed', 0, 'reconciled stale running status: task DONE marker is present']);
  });

  it('leaves live runs, pid-less runs and finished runs untouched', () => {
    writeRunInfo(path, info({ pid: process.pid, pgid: 0 }));
    expect(readRunInfoReconciled(path).status).toBe('running');
    writeRunInfo(path, info({ pid: 0, pgid: 0 }));
    expect(readRunInfoReconciled(path).status).toBe('running');
    writeRunInfo(path, info({ status: 'failed', exit_code: 2 }));
    writeDone(taskDir);
    expect(readRunInfoReconciled(path).status).toBe('failed');
  });

  it('uses the probe it is given', () => {
    writeRunInfo(path, info({ pid: 123, pgid: 123 }));
    const allDead = new (class extends LivenessProbe {
      override isRunAlive(): boolean {
        return false;
      }
    })();
    expect(readRunInfoReconciled(path, allDead).status).toBe('failed');
  });

  it('synthesises an unknown record for a run folder without run-info.yaml', () => {
    const got = readRunInfoReconciled(join(taskDir, 'runs', 'r2', 'run-info.yaml'));
    expect(got).toMatchObject({ status: 'unknown', version: 0, run_id: 'r2', project_id: 'p', task_id: 'task-20260101-000000-abc' });
    expect(existsSync(join(taskDir, 'runs', 'r2', 'run-info.yaml'))).toBe(false);
  });
});
