import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { busTypesAndBodies, cliEnv, PROJECT, processAlive, RUN_AGENT, runInfos, taskId, commandAgentSandbox, waitFor } from './helpers';

interface Outcome {
  code: number | null;
  stderr: string;
}

/**
 * A command agent that records every start (its pid, one line) and any other recorded agent still
 * alive (not a zombie) at that moment (an overlap), then blocks until $RELEASE_FILE exists and marks the task
 * DONE. With IGNORE_TERM=1 the whole group ignores SIGTERM (inherited by `sleep`).
 */
const COUNTING_AGENT = `#!/bin/sh
cat > /dev/null
[ "$IGNORE_TERM" = 1 ] && trap '' TERM
for p in $(cat "$COUNTER_FILE" 2>/dev/null); do
  # state field of /proc/<pid>/stat; a zombie (Z) awaiting its reaper is not a live agent
  st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$st" ] && [ "$st" != Z ] && echo "$p alive ($st) when $$ started" >> "$COUNTER_FILE.overlap"
done
echo "$$" >> "$COUNTER_FILE"
while [ ! -e "$RELEASE_FILE" ]; do sleep 0.05; done
touch "$JRUN_TASK_FOLDER/DONE"
`;

// Spawns the built CLI: build first (`npx nest build cli`).
describe('agents die with their runner, or are adopted (issue #11)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('counting', COUNTING_AGENT);
  const layout = new RunsLayout(tmp.root);

  function cli(args: string[], env: Record<string, string>): { child: ChildProcess; done: Promise<Outcome> } {
    const all = [...args, '--root', tmp.root, '--project', PROJECT, '--agent', 'counting', '--config', configPath];
    if (args[0] !== 'job') all.push('--max-restarts', '0');
    const child = spawn(process.execPath, [RUN_AGENT, ...all], { env: cliEnv(home, env), cwd: home, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const done = new Promise<Outcome>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
    return { child, done };
  }

  /** Waits for the agent's own record (pid = pgid, not the runner's sentinel). */
  const agentRun = (taskDir: string, runner: number) =>
    waitFor(() => runInfos(taskDir).find((i) => i.status === 'running' && i.pid > 0 && i.pid !== runner && i.pgid === i.pid), 20_000);

  const starts = (counter: string): string[] => (existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n') : []);

  it('a SIGKILLed runner takes its agent group with it, so the next task loop never runs next to it', async () => {
    const task = taskId('orphan-dies');
    const taskDir = layout.taskDir(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const release = join(base, `${task}.release`);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release };
    const first = cli(['task', '--task', task, '--prompt', 'count me'], env);
    const orphan = await agentRun(taskDir, first.child.pid!);
    // the agent runs once its runner released it (the gate, agent-executor.ts): kill the runner after that
    await waitFor(() => starts(counter).includes(String(orphan.pid)), 20_000);
    first.child.kill('SIGKILL');
    await first.done;
    await waitFor(() => !processAlive(orphan.pid), 20_000);

    const second = cli(['task', '--task', task], env);
    let ended: Outcome | undefined;
    void second.done.then((o) => (ended = o));
    await waitFor(() => starts(counter).length === 2 || ended, 20_000);
    expect(ended).toBeUndefined();
    writeFileSync(release, '');
    expect(await second.done).toEqual({ code: 0, stderr: expect.stringContaining('DONE: task completed') });
    expect(existsSync(`${counter}.overlap`)).toBe(false);
    // run ids of two processes within one second order by pid, not by time: pick the second run by id
    expect(runInfos(taskDir).filter((i) => i.run_id !== orphan.run_id).map((i) => i.status)).toEqual(['completed']);
    expect(starts(counter)).toHaveLength(2);
  });

  it('an orphan that ignores SIGTERM is killed after RUN_AGENT_ORPHAN_GRACE_SECONDS', async () => {
    const task = taskId('orphan-grace');
    const taskDir = layout.taskDir(PROJECT, task);
    const release = join(base, `${task}.release`);
    const counter = join(base, `${task}.count`);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release, IGNORE_TERM: '1', RUN_AGENT_ORPHAN_GRACE_SECONDS: '1' };
    const first = cli(['task', '--task', task, '--prompt', 'count me'], env);
    const orphan = await agentRun(taskDir, first.child.pid!);
    // the agent runs once its runner released it (the gate, agent-executor.ts): kill the runner after that
    await waitFor(() => starts(counter).includes(String(orphan.pid)), 20_000);
    first.child.kill('SIGKILL');
    await first.done;
    try {
      await waitFor(() => !processAlive(orphan.pid), 20_000);
    } finally {
      writeFileSync(release, '');
    }
  });

  it('a live orphan (ignoring SIGTERM, long grace) is refused by task, task resume and a root job naming its pid; --adopt waits and completes the loop', async () => {
    const task = taskId('orphan-adopt');
    const taskDir = layout.taskDir(PROJECT, task);
    const counter = join(base, `${task}.count`);
    const release = join(base, `${task}.release`);
    const env = { COUNTER_FILE: counter, RELEASE_FILE: release, IGNORE_TERM: '1', RUN_AGENT_ORPHAN_GRACE_SECONDS: '300' };
    const first = cli(['task', '--task', task, '--prompt', 'count me'], env);
    const orphan = await agentRun(taskDir, first.child.pid!);
    // the agent runs once its runner released it (the gate, agent-executor.ts): kill the runner after that
    await waitFor(() => starts(counter).includes(String(orphan.pid)), 20_000);
    first.child.kill('SIGKILL');
    await first.done;
    try {
      const refusal =
        `\nError: task ${task} still has a live agent from a runner that is gone: run ${orphan.run_id}, pid ${orphan.pid}; ` +
        `pass --adopt to wait for it and continue the loop, or stop it with \`run-agent stop --project ${PROJECT} --task ${task}\`\n`;
      for (const args of [['task', '--task', task], ['task', 'resume', '--task', task], ['job', '--task', task, '--prompt', 'a root job']]) {
        const refused = await cli(args, env).done;
        // `task resume` first prints "Resuming task: <id>"
        expect([args.join(' '), refused.code, `\n${refused.stderr}`.endsWith(refusal)]).toEqual([args.join(' '), 1, true]);
      }
      expect(processAlive(orphan.pid)).toBe(true);
      expect(starts(counter)).toHaveLength(1);

      const adopter = cli(['task', 'resume', '--task', task, '--adopt'], env);
      await waitFor(() => busTypesAndBodies(layout.taskBus(PROJECT, task)).some((l) => l.startsWith(`INFO adopting run ${orphan.run_id}`)), 20_000);
      writeFileSync(release, '');
      const adopted = await adopter.done;
      expect(adopted.code).toBe(0);
      expect(starts(counter)).toHaveLength(1);
      expect(existsSync(`${counter}.overlap`)).toBe(false);
      const infos = runInfos(taskDir);
      expect(infos.map((i) => [i.run_id, i.status])).toEqual([[orphan.run_id, 'completed']]);
      expect(busTypesAndBodies(layout.taskBus(PROJECT, task))).toContain('INFO task completed (DONE marker present, no active children)');
    } finally {
      writeFileSync(release, '');
      await waitFor(() => !processAlive(orphan.pid), 20_000);
    }
  });
});
