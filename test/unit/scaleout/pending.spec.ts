import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { heldTasksDir, PendingTasks } from '@app/scaleout';

const P = 'proj';
const A = 'task-20260101-000000-aaaaa';
const B = 'task-20260101-000000-bbbbb';
const task = (taskId: string, dependsOn?: string[]) => ({ projectId: P, taskId, runId: '20260101-0000000000-1-1', prompt: 'x', dependsOn });

describe('tasks the server accepted that no worker reported yet', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'pending-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('queues a task without open dependencies at once and lists it until its first record', () => {
    const pending = new PendingTasks(root);
    expect(pending.add(task(A))).toBe(true);
    expect(pending.isHeld(P, A)).toBe(false);
    expect(pending.list(P).map((t) => t.taskId)).toEqual([A]);
    expect(pending.list('other')).toEqual([]);
    pending.delete(P, A);
    expect(pending.get(P, A)).toBeUndefined();
  });

  it('holds a task until its dependencies are DONE on the replica, then releases it once', () => {
    const pending = new PendingTasks(root);
    expect(pending.add(task(B, [A]))).toBe(false);
    expect(pending.get(P, B)).toMatchObject({ dependsOn: [A], blockedBy: [A] });
    expect(pending.release()).toEqual([]);
    mkdirSync(join(root, P, A), { recursive: true });
    writeFileSync(join(root, P, A, 'DONE'), '');
    expect(pending.release().map((t) => t.taskId)).toEqual([B]);
    expect(pending.get(P, B)).toMatchObject({ blockedBy: [] });
    expect(pending.isHeld(P, B)).toBe(false);
    expect(pending.release()).toEqual([]);
    // a failed publish puts it back on hold: released again on the next pass
    pending.hold(P, B);
    expect(pending.release().map((t) => t.taskId)).toEqual([B]);
  });

  describe('held tasks survive a server restart (they are in no queue yet)', () => {
    const done = (t: string) => {
      mkdirSync(join(root, P, t), { recursive: true });
      writeFileSync(join(root, P, t, 'DONE'), '');
    };

    it('holds a task again after a restart, releases it when its dependencies are DONE, and lists it queued once queued', () => {
      const before = new PendingTasks(root);
      before.add({ ...task(B, [A]), env: { K: 'v' } });
      const lines: string[] = [];
      const after = new PendingTasks(root, (l) => lines.push(l));
      expect(after.isHeld(P, B)).toBe(true);
      expect(after.get(P, B)).toMatchObject({ runId: '20260101-0000000000-1-1', dependsOn: [A], blockedBy: [A] });
      expect(lines.join('\n')).toContain(`held task ${P}/${B} kept from before the restart (waits for ${A})`);
      expect(after.release()).toEqual([]);
      done(A);
      const released = after.release();
      expect(released).toEqual([expect.objectContaining({ taskId: B, env: { K: 'v' }, dependsOn: [A] })]);
      // released but not yet confirmed in the queue: a crash now republishes it under the same message id
      expect(new PendingTasks(root).isHeld(P, B)).toBe(true);
      after.queued(P, B);
      // queued: JetStream keeps the message; a restarted server lists it as queued and publishes nothing
      const restarted = new PendingTasks(root);
      expect(restarted.isHeld(P, B)).toBe(false);
      expect(restarted.get(P, B)).toMatchObject({ taskId: B, blockedBy: [] });
      expect(restarted.release()).toEqual([]);
    });

    it('a task queued at once is listed as queued after a restart until the replica shows it', () => {
      new PendingTasks(root).add(task(A, []));
      const lines: string[] = [];
      const after = new PendingTasks(root, (l) => lines.push(l));
      expect(after.get(P, A)).toMatchObject({ taskId: A, blockedBy: [] });
      expect(after.isHeld(P, A)).toBe(false);
      expect(lines.join('\n')).toContain(`queued task ${P}/${A} kept from before the restart`);
      after.delete(P, A);
      expect(new PendingTasks(root).get(P, A)).toBeUndefined();
    });

    it('forgets a held task that was cancelled, and one a worker has reported since', () => {
      const pending = new PendingTasks(root);
      pending.add(task(B, [A]));
      pending.delete(P, B);
      expect(new PendingTasks(root).get(P, B)).toBeUndefined();

      const C = 'task-20260101-000000-ccccc';
      new PendingTasks(root).add(task(C, [A]));
      mkdirSync(join(root, P, C), { recursive: true }); // the replica shows the task: its publish went out
      expect(new PendingTasks(root).get(P, C)).toBeUndefined();
      expect(readdirSync(heldTasksDir(root))).toEqual([]);
    });

    it('leaves a file that does not hold a valid task where it is, and says so', () => {
      mkdirSync(heldTasksDir(root), { recursive: true });
      const bad = join(heldTasksDir(root), 'x.json');
      writeFileSync(bad, JSON.stringify({ task: { ...task(A), projectId: '../escape' }, createdAt: new Date().toISOString() }));
      const lines: string[] = [];
      const pending = new PendingTasks(root, (l) => lines.push(l));
      expect(pending.list()).toEqual([]);
      expect(existsSync(bad)).toBe(true);
      expect(lines.join('\n')).toMatch(/held task file .*x\.json is unreadable, left as is/);
    });
  });
});
