import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { startCli } from '../../utils/cli';
import { commandAgentSandbox, PROJECT, processAlive, runInfos, supervisorSandbox, taskId, waitFor } from './helpers';

/**
 * ROOT: starts two sub-agents with `run-agent job` (CHILD one, CHILD two), records their exit codes,
 * writes DONE. CHILD <name>: records "<pid> <parent pid> <JRUN_PARENT_ID> <FROM_PARENT>"; `two` exits 3.
 * HOLD: records its pid and runs until stopped.
 */
const AGENT = `#!/bin/sh
prompt=$(cat)
case "$prompt" in
*ROOT*)
  export FROM_PARENT=inherited
  run-agent job --agent tree --prompt "CHILD one" 2> "$JRUN_TASK_FOLDER/err-one" & a=$!
  run-agent job --agent tree --prompt "CHILD two" 2> "$JRUN_TASK_FOLDER/err-two" & b=$!
  wait $a; echo $? > "$JRUN_TASK_FOLDER/exit-one"
  wait $b; echo $? > "$JRUN_TASK_FOLDER/exit-two"
  touch "$JRUN_TASK_FOLDER/DONE";;
*CHILD*)
  name=$(printf '%s' "$prompt" | grep -o 'CHILD [a-z]*' | tail -n 1 | cut -d' ' -f2)
  echo "$$ $PPID $JRUN_PARENT_ID $FROM_PARENT" > "$JRUN_TASK_FOLDER/child-$name"
  [ "$name" = two ] && exit 3
  exit 0;;
*HOLD*)
  echo $$ > "$JRUN_TASK_FOLDER/held"
  while :; do sleep 0.05; done;;
esac
`;

// Spawns the built CLI: build first (`npm run build:cli`).
describe('run-agent job through the host task supervisor (RUN_AGENT_SUPERVISOR=1, issue #33)', () => {
  const { tmp, base, home, configPath, children } = commandAgentSandbox('tree', AGENT);
  const layout = new RunsLayout(tmp.root);
  const { supervisors, env } = supervisorSandbox(base, home);
  const read = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8').trim();
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

  it("a sub-agent's jobs run in one supervisor, in the caller's environment, as children of its run", async () => {
    const id = taskId('tree');
    const root = startCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', id, '--agent', 'tree', '--config', configPath, '--max-restarts', '0', '--prompt', 'ROOT'], {
      env: env(),
      cwd: home,
    });
    children.push(root.child);
    expect(await root.done).toMatchObject({ code: 0 });
    const taskDir = layout.taskDir(PROJECT, id);
    const [rootRun] = runInfos(taskDir).filter((i) => !i.parent_run_id);
    const [one, two] = ['one', 'two'].map((name) => read(taskDir, `child-${name}`).split(' '));
    for (const pid of [one[1], two[1]].map(Number)) supervisors.add(pid);
    // both sub-agents were started by one process, the supervisor, not by a runner of their own
    expect(one[1]).toBe(two[1]);
    expect(cmdline(Number(one[1])).some((arg) => arg.endsWith('task-supervisor.js'))).toBe(true);
    // the caller's JRUN_* and its own variables reached the child, not the supervisor's
    expect(one.slice(2)).toEqual([rootRun.run_id, 'inherited']);
    expect(two.slice(2)).toEqual([rootRun.run_id, 'inherited']);
    const childRuns = runInfos(taskDir).filter((i) => i.parent_run_id === rootRun.run_id);
    expect(childRuns.map((i) => i.status).sort()).toEqual(['completed', 'failed']);
    expect(read(taskDir, 'exit-one')).toBe('0');
    expect(readdirSync(join(layout.runsDir(PROJECT, id), rootRun.run_id, 'pending-children'))).toEqual([]);

    // a failed sub-agent's job ends with the code and error line an in-process job gives
    const own = startCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', id, '--agent', 'tree', '--config', configPath, '--prompt', 'CHILD two'], {
      env: env({ RUN_AGENT_SUPERVISOR: '0' }),
      cwd: home,
    });
    children.push(own.child);
    const here = await own.done;
    expect(here.code).not.toBe(0);
    expect(read(taskDir, 'exit-two')).toBe(String(here.code));
    const lastLine = (s: string) => s.trim().split('\n').pop()!.replace(/run-\S+/g, 'RUN');
    expect(lastLine(read(taskDir, 'err-two'))).toBe(lastLine(here.stderr));
    expect(lastLine(here.stderr)).toMatch(/^Error: /);
  });

  it('SIGINT to a job client stops its agent, records the stop as an in-process runner does, and the client dies of SIGINT', async () => {
    const id = taskId('held');
    const client = startCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', id, '--agent', 'tree', '--config', configPath, '--prompt', 'HOLD'], { env: env(), cwd: home });
    children.push(client.child);
    const taskDir = layout.taskDir(PROJECT, id);
    const agent = Number(await waitFor('the held agent', () => existsSync(join(taskDir, 'held')) && read(taskDir, 'held')));
    client.child.kill('SIGINT');
    expect(await client.done).toMatchObject({ signal: 'SIGINT' });
    expect(processAlive(agent)).toBe(false);
    const [info] = runInfos(taskDir);
    expect(info.status).toBe('failed');
    expect(info.error_summary).toBe(`stopped by run-agent (pid ${client.child.pid}) received SIGINT (SIGTERM)`);
  });

  it('`job --follow` and `job --help` run in the client itself', async () => {
    const id = taskId('follow');
    const followed = startCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', id, '--agent', 'tree', '--config', configPath, '--prompt', 'CHILD one', '--follow'], { env: env(), cwd: home });
    children.push(followed.child);
    expect(await followed.done).toMatchObject({ code: 0 });
    const [pid, parent] = read(layout.taskDir(PROJECT, id), 'child-one').split(' ').map(Number);
    expect(pid).toBeGreaterThan(0);
    expect(parent).toBe(followed.child.pid);
    const help = startCli(['job', '--help'], { env: env(), cwd: home });
    expect(await help.done).toMatchObject({ code: 0, stdout: expect.stringContaining('--follow') });
  });

  it('a usage error is one line, exit 2, and writes nothing', async () => {
    const result = await startCli(['job', '--root', tmp.root, '--project', PROJECT, '--task', '../escape', '--agent', 'tree', '--config', configPath, '--prompt', 'x'], { env: env(), cwd: home }).done;
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(tmp.root, 'escape'))).toBe(false);
  });
});
