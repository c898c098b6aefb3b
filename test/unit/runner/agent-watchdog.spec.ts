import { spawn } from 'node:child_process';
import { watchAgentGroup } from '../../../libs/runner/src/agent-watchdog';
import { waitFor } from '../../utils/wait';
import { processAlive } from '../../utils/processes';

describe('agent watchdog (issue #11)', () => {
  it('released after a normal end: exits without signalling the group', async () => {
    const agent = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    try {
      const dog = watchAgentGroup(agent.pid!, {});
      expect(dog.pid).toBeGreaterThan(0);
      dog.release();
      await waitFor('the watchdog to exit', () => !processAlive(dog.pid!));
      expect(processAlive(agent.pid!)).toBe(true);
    } finally {
      process.kill(-agent.pid!, 'SIGKILL');
    }
  });
});
