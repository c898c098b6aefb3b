import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCancelled, writeStopRequested } from '@app/storage';
import { DEFAULT_MAX_RESTARTS } from '@app/runner';
import { lockTask, TASK_LOCK_FILE, taskLeaseMs } from '../../../libs/runner/src/task-lock';
import { waitFor } from '../../utils/wait';
import { taskLimits } from '../../../libs/runner/src/task-options';
import { resolveTaskPrompt, taskStopReason } from '../../../libs/runner/src/task-state';

const base = { root: '/r', projectId: 'p', taskId: 'task-20260101-000000-abc' };

describe('the parts of the Ralph loop (libs/runner/src/task-*.ts)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'task-parts-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('taskLimits: defaults, zero restarts allowed, negatives refused, non-positive polls fall back', () => {
    expect(taskLimits(base).maxRestarts).toBe(DEFAULT_MAX_RESTARTS);
    expect(taskLimits({ ...base, maxRestarts: 0, restartDelayMs: 0 })).toMatchObject({ maxRestarts: 0, restartDelayMs: 0 });
    expect(() => taskLimits({ ...base, maxRestarts: -1 })).toThrow('max restarts must not be negative');
    expect(() => taskLimits({ ...base, lockWaitMs: Number.NaN })).toThrow('lock wait must not be negative');
    expect(taskLimits({ ...base, childPollIntervalMs: 0, dependencyPollIntervalMs: 7 })).toMatchObject({ childPollMs: 1000, dependencyPollMs: 7 });
  });

  it('lockTask: one holder per task (flock), the pid in the file, released for the next', async () => {
    const lock = await lockTask(dir, 'p', 'task-x', 0);
    expect(lock.tookOver).toBe(false);
    expect(readFileSync(join(dir, TASK_LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    await expect(lockTask(dir, 'p', 'task-x', 50)).rejects.toThrow(`task task-x is already running (its Ralph loop is held by another process, pid ${process.pid})`);
    lock.release();
    lock.release(); // idempotent
    const again = await lockTask(dir, 'p', 'task-x', 0);
    again.release();
  });

  it('lockTask takeover: a holder that renews its lease keeps the task; one that renews nothing for a lease loses it', async () => {
    const live = await lockTask(dir, 'p', 'task-x', 0, { leaseMs: 150 });
    try {
      await expect(lockTask(dir, 'p', 'task-x', 0, { takeover: true, leaseMs: 150 })).rejects.toThrow('which keeps renewing its lease');
    } finally {
      live.release();
    }
    // a holder that never renews: flock(1) holding the file, as a stopped runner would
    const holder = spawn('flock', [join(dir, TASK_LOCK_FILE), 'sleep', '60'], { stdio: 'ignore' });
    try {
      await waitFor('flock(1) holds the task lock', async () => (await lockTask(dir, 'p', 'task-x', 0).then((l) => (l.release(), false), () => true)));
      const taken = await lockTask(dir, 'p', 'task-x', 0, { takeover: true, leaseMs: 150 });
      expect(taken.tookOver).toBe(true);
      expect(readFileSync(join(dir, TASK_LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
      taken.release();
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('taskLeaseMs: $CONDUCTOR_TASK_LEASE_MS, default 30 s, bad values refused', () => {
    expect(taskLeaseMs({})).toBe(30_000);
    expect(taskLeaseMs({ CONDUCTOR_TASK_LEASE_MS: '1500' })).toBe(1500);
    for (const bad of ['1.5', '-1', 'abc', '50']) expect(() => taskLeaseMs({ CONDUCTOR_TASK_LEASE_MS: bad })).toThrow('invalid CONDUCTOR_TASK_LEASE_MS');
  });

  it('resolveTaskPrompt: an explicit prompt wins, else TASK.md, never empty', () => {
    expect(() => resolveTaskPrompt(dir)).toThrow('TASK.md not found and no prompt provided');
    expect(resolveTaskPrompt(dir, '  go  ')).toBe('go');
    writeFileSync(join(dir, 'TASK.md'), '\n');
    expect(() => resolveTaskPrompt(dir)).toThrow('read TASK.md: file is empty');
    writeFileSync(join(dir, 'TASK.md'), 'from file\n');
    expect(resolveTaskPrompt(dir)).toBe('from file');
    expect(resolveTaskPrompt(dir, 'given')).toBe('given');
  });

  it('taskStopReason: a marker older than the loop is ignored, unless permanent; CANCELLED always stops', () => {
    const loopStart = Date.now() + 5000;
    expect(taskStopReason(dir, loopStart)).toBeUndefined();
    writeStopRequested(dir, false);
    expect(taskStopReason(dir, loopStart)).toBeUndefined();
    expect(taskStopReason(dir, Date.now() - 5000)).toBe('stop requested');
    writeStopRequested(dir, true);
    expect(taskStopReason(dir, loopStart)).toBe('stop requested (permanent)');
    writeCancelled(dir, 'no longer needed');
    expect(taskStopReason(dir, loopStart)).toBe('task cancelled');
  });
});
