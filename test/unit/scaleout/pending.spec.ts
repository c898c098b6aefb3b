import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PendingTasks } from '@app/scaleout';

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
});
