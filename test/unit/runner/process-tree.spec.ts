import { spawn } from 'node:child_process';
import { collectProcessTree, isProcessRunning, terminateProcesses } from '@app/runner';

function waitForLine(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
  });
}

describe('process tree walking (D6)', () => {
  it('finds a grandchild that left the group via setsid, and terminates the whole tree', async () => {
    // leader (own group) → sh → `setsid sleep` (own session) and a plain `sleep`
    // the pid is printed only after both background children were forked
    const leader = spawn('sh', ['-c', 'setsid sleep 30 & a=$!; sleep 30 & echo $a; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const setsidPid = Number(await waitForLine(leader));
    const tree = collectProcessTree([leader.pid!]);
    expect(tree).toContain(leader.pid);
    expect(tree).toContain(setsidPid);
    expect(tree.length).toBeGreaterThanOrEqual(3);
    expect(tree).not.toContain(process.pid);
    const closed = new Promise((r) => leader.on('close', r));
    const { signal, alive } = await terminateProcesses([leader.pid!], tree, 30_000); // returns as soon as all exited
    await closed;
    expect(signal).toBe('SIGTERM');
    expect(alive).toEqual([]);
    expect(tree.filter(isProcessRunning)).toEqual([]);
  });

  it('escalates to SIGKILL for a process that ignores SIGTERM', async () => {
    const stubborn = spawn('sh', ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    await waitForLine(stubborn);
    const tree = collectProcessTree([stubborn.pid!]);
    const closed = new Promise((r) => stubborn.on('close', r));
    // The grace period running out is the behaviour under test, so a short one is right here.
    const { signal, alive } = await terminateProcesses([stubborn.pid!], tree, 300);
    await closed;
    expect(signal).toBe('SIGKILL');
    expect(alive).toEqual([]);
  });
});
