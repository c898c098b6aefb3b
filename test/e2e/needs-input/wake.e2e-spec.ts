import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isTaskLoopRunning } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { cliEnv, PROJECT, runInfos, taskId, waitFor } from '../runner/helpers';
import { runCli } from '../../utils/cli';
import { postJson, startConductor, type RunningServer } from '../server/helpers';

/*
 * #30 item 1: waking a finished task runs the task's own agent (its config name: several agents
 * share the type `command`), with the caller's config and runs root (the detached loop ran in the
 * task folder, found no config and died after "started a Ralph loop"), only reports success once
 * the loop runs, keeps DONE when it cannot start, and the wake prompt carries the MERGE_CONFLICT
 * that caused it. Real CLI and server, real agents (two command agents of one type).
 */
describe('waking a finished task (#30 item 1)', () => {
  const base = mkdtempSync(join(tmpdir(), 'wake-e2e-'));
  const work = join(base, 'work');
  const root = join(base, 'runs');
  const layout = new RunsLayout(root);
  const env = cliEnv(join(base, 'home'));
  beforeAll(() => {
    mkdirSync(work);
    mkdirSync(join(base, 'home'));
    const agent = (name: string) => {
      const path = join(base, `${name}-agent`);
      writeFileSync(path, `#!/bin/sh\ncat > /dev/null\necho ${name} > "$JRUN_RUN_FOLDER/who"\ntouch "$JRUN_TASK_FOLDER/DONE"\n`, { mode: 0o755 });
      return path;
    };
    // the config a user keeps in their working directory: found as ./config.yaml
    writeFileSync(
      join(work, 'config.yaml'),
      `agents:\n  alpha:\n    type: command\n    command: ${agent('alpha')}\n  beta:\n    type: command\n    command: ${agent('beta')}\ndefaults:\n  agent: alpha\nstorage:\n  runs_dir: ${root}\n`,
    );
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const who = (task: string, runId: string) => readFileSync(join(layout.runDir(PROJECT, task, runId), 'who'), 'utf8').trim();
  const prompt = (task: string, runId: string) => readFileSync(join(layout.runDir(PROJECT, task, runId), 'prompt.md'), 'utf8');
  const finishedTask = async (task: string) => {
    const first = await runCli(['task', '--project', PROJECT, '--task', task, '--agent', 'beta', '--prompt', 'ship the feature'], { env, cwd: work });
    expect(first.code).toBe(0);
    return runInfos(layout.taskDir(PROJECT, task))[0];
  };

  it('bus post --resume runs the task\'s agent with the caller\'s config; the prompt has the MERGE_CONFLICT and the waking message', async () => {
    const task = taskId('wakecli');
    const taskDir = layout.taskDir(PROJECT, task);
    const first = await finishedTask(task);
    expect([first.agent, first.agent_name]).toEqual(['command', 'beta']);
    // what `run-agent merge` posts on a conflict (worktree/merge.ts), then the user wakes the task
    const conflict = await runCli(['bus', 'post', '--project', PROJECT, '--task', task, '--type', 'MERGE_CONFLICT', '--body', 'merge of conductor/x into main conflicts\nfiles:\n- src/app.ts'], { env, cwd: work });
    expect(conflict.code).toBe(0);
    const woke = await runCli(['bus', 'post', '--project', PROJECT, '--task', task, '--type', 'USER', '--body', 'rebase onto main and fix the conflict', '--resume'], { env, cwd: work });
    expect([woke.code, woke.stderr]).toEqual([0, '']);
    expect(woke.stdout).toMatch(/^msg_id: MSG-\S+\nresume: started a Ralph loop \(pid \d+\)\n$/);

    const second = await waitFor('the woken run to finish', () => {
      const infos = runInfos(taskDir);
      return infos.length === 2 && infos.every((i) => i.status === 'completed') && !isTaskLoopRunning(taskDir) ? infos.find((i) => i.run_id !== first.run_id) : undefined;
    });
    expect(second.agent_name).toBe('beta');
    expect(who(task, second.run_id)).toBe('beta');
    const text = prompt(task, second.run_id);
    expect(text).toContain('merge of conductor/x into main conflicts\nfiles:\n- src/app.ts');
    expect(text).toContain('rebase onto main and fix the conflict');
    expect(text).toContain('ship the feature');
  }, 60_000);

  it('a loop that cannot start is an error (exit 1, its reason) and DONE stays, the very same file', async () => {
    const task = taskId('wakefail');
    const taskDir = layout.taskDir(PROJECT, task);
    await finishedTask(task);
    const done = statSync(join(taskDir, 'DONE'));
    // a cancelled task's loop refuses to run
    writeFileSync(join(taskDir, 'CANCELLED'), 'cancelled_at: 2026-01-01T00:00:00Z\nreason: test\n');
    const woke = await runCli(['bus', 'post', '--project', PROJECT, '--task', task, '--body', 'wake up', '--resume'], { env, cwd: work });
    expect(woke.code).toBe(1);
    expect(woke.stderr).toMatch(/^Error: the Ralph loop did not start \(exit 1\): task \S+ is cancelled/);
    expect(woke.stdout).not.toContain('started a Ralph loop');
    const after = statSync(join(taskDir, 'DONE'));
    expect([after.ino, after.mtimeMs]).toEqual([done.ino, done.mtimeMs]);
    expect(runInfos(taskDir)).toHaveLength(1);
  }, 60_000);

  describe('over the API', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startConductor(base, root, join(work, 'config.yaml'));
    });
    afterAll(async () => {
      await server.stop('SIGKILL');
    });

    it('POST …/messages {resume: true} starts the task\'s own agent, not the default one of its type', async () => {
      const task = 'task-20260101-000000-wakeapi';
      const taskDir = layout.taskDir(PROJECT, task);
      const created = await postJson(`${server.url}/api/v1/tasks`, { project_id: PROJECT, task_id: task, agent_type: 'beta', prompt: 'ship it' });
      expect(created.status).toBe(201);
      await waitFor('the first run to finish', () => runInfos(taskDir).length === 1 && runInfos(taskDir)[0].status === 'completed' && !isTaskLoopRunning(taskDir));
      const woke = await postJson(`${server.url}/api/projects/${PROJECT}/tasks/${task}/messages`, { type: 'USER', body: 'one more thing', resume: true });
      expect(woke.status).toBe(201);
      expect(woke.body).toMatchObject({ resumed: true, reopened: true, loop: 'started' });
      const second = await waitFor('the woken run to finish', () => {
        const infos = runInfos(taskDir);
        return infos.length === 2 && infos.every((i) => i.status === 'completed') ? infos.find((i) => i.run_id !== created.body.run_id) : undefined;
      });
      expect(second.agent_name).toBe('beta');
      expect(who(task, second.run_id)).toBe('beta');
      expect(prompt(task, second.run_id)).toContain('one more thing');
    }, 60_000);
  });
});
