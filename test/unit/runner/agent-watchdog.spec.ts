import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { watchAgentGroup } from '../../../libs/runner/src/agent-watchdog';
import { waitFor } from '../../utils/wait';

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]);
  } catch {
    return false;
  }
}

describe('agent watchdog (issue #11)', () => {
  it('released after a normal end: exits without signalling the group', async () => {
    const agent = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    try {
      const dog = watchAgentGroup(agent.pid!, {});
      expect(dog.pid).toBeGreaterThan(0);
      dog.release();
      await waitFor('the watchdog to exit', () => !running(dog.pid!));
      expect(running(agent.pid!)).toBe(true);
    } finally {
      process.kill(-agent.pid!, 'SIGKILL');
    }
  });
});
