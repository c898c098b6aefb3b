import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusWriter } from '@app/messagebus';
import { activeStopRequest, checkTodoItem, decideMonitorAction, MonitorLock, parseTodo } from '@app/orchestration';
import { createLivenessProbe, RunsLayout, writeCancelled, writeStopRequested } from '@app/storage';
import { liveGroupLeader, runningInfo, writeRun } from '../../e2e/orchestration/helpers';

const P = 'proj';
const T = 'task-20260101-000000-mon';

describe('monitor decisions', () => {
  let root: string;
  const leaders: number[] = [];
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'monitor-'))));
  afterEach(() => {
    for (const pid of leaders.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  });
  const taskDir = (): string => join(root, P, T);
  const decide = (staleAfterMs?: number) => decideMonitorAction(new RunsLayout(root), P, T, { staleAfterMs, probe: createLivenessProbe() });

  it('parses unchecked items with a task id and flips the first matching one', () => {
    const text = `# TODO\n- [ ] first ${T} do it\n  - [ ] nested task-20260101-000000-other x\n- [x] done ${T}\n- [ ] no id here\n`;
    expect(parseTodo(text)).toEqual([
      { taskId: T, text: `first ${T} do it` },
      { taskId: 'task-20260101-000000-other', text: 'nested task-20260101-000000-other x' },
    ]);
    const file = join(root, 'TODOs.md');
    writeFileSync(file, text);
    expect(checkTodoItem(file, T)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(text.replace(`- [ ] first`, '- [x] first'));
    expect(checkTodoItem(file, T)).toBe(false);
  });

  it('starts tasks without folder or runs; skips DONE and CANCELLED ones', () => {
    expect(decide()).toMatchObject({ action: 'start' });
    mkdirSync(taskDir(), { recursive: true });
    expect(decide()).toMatchObject({ action: 'start', reason: 'no runs yet' });
    writeCancelled(taskDir(), 'not needed');
    expect(decide()).toMatchObject({ action: 'skip', reason: 'task is CANCELLED' });
    rmSync(join(taskDir(), 'CANCELLED'));
    writeFileSync(join(taskDir(), 'DONE'), '');
    expect(decide()).toMatchObject({ action: 'skip', reason: 'already DONE' });
  });

  it('resumes failed and dead runs unless a stop was requested', () => {
    writeRun(root, P, T, 'run-1', { status: 'failed', exit_code: 1 });
    expect(decide()).toMatchObject({ action: 'resume' });
    writeStopRequested(taskDir(), false);
    expect(decide()).toMatchObject({ action: 'skip' });
    writeStopRequested(taskDir(), false, new Date(Date.now() - 120_000));
    expect(decide()).toMatchObject({ action: 'resume' });
    expect(existsSync(join(taskDir(), 'STOP-REQUESTED'))).toBe(false);
    writeStopRequested(taskDir(), true);
    expect(activeStopRequest(taskDir(), new Date(Date.now() + 3_600_000))).toBe(true);
    rmSync(join(taskDir(), 'STOP-REQUESTED'));
    writeRun(root, P, T, 'run-2', runningInfo(999_999_999));
    expect(decide()).toMatchObject({ action: 'resume' });
  });

  it('finalizes completed runs with output only', () => {
    const dir = writeRun(root, P, T, 'run-1');
    expect(decide()).toMatchObject({ action: 'skip', reason: 'run run-1 completed without output' });
    writeFileSync(join(dir, 'output.md'), 'all done\n');
    expect(decide()).toMatchObject({ action: 'finalize' });
  });

  it('recovers a live run without recent activity, and skips an active one', async () => {
    const leader = liveGroupLeader();
    leaders.push(leader.pid!);
    const dir = writeRun(root, P, T, 'run-1', runningInfo(leader.pid!, 3_600_000));
    expect(decide(60_000)).toMatchObject({ action: 'recover', runDir: dir });
    const bus = new BusWriter(join(taskDir(), 'TASK-MESSAGE-BUS.md'));
    await bus.append({ type: 'PROGRESS', project_id: P, task_id: T, run_id: 'run-1', body: 'progress is not activity' });
    expect(decide(60_000)).toMatchObject({ action: 'recover' });
    await bus.append({ type: 'FACT', project_id: P, task_id: T, run_id: 'run-1', body: 'found something' });
    bus.close();
    expect(decide(60_000)).toMatchObject({ action: 'skip', reason: 'run run-1 is running' });
  });

  it('the lock admits one live monitor and replaces dead or corrupt locks', () => {
    mkdirSync(join(root, P), { recursive: true });
    const path = join(root, P, '.monitor.pid');
    const leader = liveGroupLeader();
    leaders.push(leader.pid!);
    writeFileSync(path, `${leader.pid}\n`);
    expect(() => new MonitorLock(path, createLivenessProbe()).acquire(P)).toThrow(`monitor already running for project "${P}" (PID ${leader.pid}); lockfile: ${path}`);
    writeFileSync(path, 'garbage\n');
    const lock = new MonitorLock(path, createLivenessProbe());
    lock.acquire(P);
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n`);
    lock.release();
    expect(existsSync(path)).toBe(false);
  });
});
