import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findLiveRootRun, isProcessRunning as runnerProcessRunning } from '@app/runner';
import { isProcessRunning, LivenessProbe, processState } from '@app/storage';
import { writeRun } from '../../utils/run-fixtures';
import { waitFor } from '../../utils/wait';

/**
 * The one zombie rule (issue #31): a zombie is an exited process. The storage probe (readers,
 * reconcile) and the runner's refuse/adopt check (findLiveRootRun) must give the same answer for
 * a real zombie whose parent lives and does not wait for it.
 */
describe('one zombie rule for liveness', () => {
  it('a zombie of a live parent (alone in its group) is dead to the probe and to the runner alike', async () => {
    // the parent exec's sleep, which never waits: the setsid'd child becomes a zombie in its own group
    const parent = spawn('/bin/sh', ['-c', 'setsid /bin/sh -c "exit 0" & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    let out = '';
    parent.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const dir = mkdtempSync(join(tmpdir(), 'zombie-rule-'));
    try {
      await waitFor('the child pid', () => out.includes('\n'));
      const zombie = Number(out.trim());
      await waitFor('the child to be a zombie', () => processState(zombie) === 'Z');
      const probe = new LivenessProbe();
      expect(probe.isPidAlive(parent.pid!)).toBe(true);
      expect(isProcessRunning(zombie)).toBe(false);
      expect(runnerProcessRunning(zombie)).toBe(false);
      expect(probe.isPidAlive(zombie)).toBe(false);
      expect(probe.isGroupAlive(zombie)).toBe(false);
      expect(probe.isRunAlive({ pid: zombie, pgid: zombie })).toBe(false);
      // the runner's view: a root run recorded with the zombie as its agent is not a live agent
      const task = 'task-20260101-000000-zombie';
      writeRun(dir, 'p', task, '20260101-0000000000-1', { status: 'running', pid: zombie, pgid: zombie, exit_code: -1 });
      const taskDir = join(dir, 'p', task);
      expect(findLiveRootRun(taskDir, probe)).toBeUndefined();
      // and the live parent's group (sleep) is alive to both
      expect(probe.isGroupAlive(parent.pid!)).toBe(true);
    } finally {
      process.kill(-parent.pid!, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
