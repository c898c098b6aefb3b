import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { cliEnv, processAlive, PROJECT, runInfos, taskId, tempRoot, waitFor } from './helpers';
import { startCli } from '../../utils/cli';

function start(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  return startCli(args, { env, cwd });
}

// Spawns the built CLI: build first (`npx nest build cli`).
describe('run-agent job batch / --follow, task cancel / delete / resume (built CLI)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = join(tmp.root, '..', 'home');
  mkdirSync(home, { recursive: true });
  const run = (args: string[], extra: Record<string, string> = {}) => start(args, cliEnv(home, extra), home).done;
  afterAll(() => tmp.cleanup());

  it('job batch runs each prompt as its own task; count mismatch is a usage error', async () => {
    const [t1, t2] = [taskId('b1'), taskId('b2')];
    const promptFile = join(home, 'prompt.txt');
    writeFileSync(promptFile, '  from a file \n');
    const ok = await run(['job', 'batch', '--root', tmp.root, '--project', PROJECT, '--agent', 'claude', '--task', t1, '--task', t2, '--prompt', 'first', '--prompt-file', promptFile]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`batch item 1/2 completed: ${t1}\nbatch item 2/2 completed: ${t2}\n`);
    expect(readFileSync(join(layout.taskDir(PROJECT, t2), 'TASK.md'), 'utf8')).toBe('from a file\n');
    const bad = await run(['job', 'batch', '--root', tmp.root, '--project', PROJECT, '--agent', 'claude', '--task', t1, '--prompt', 'a', '--prompt', 'b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('Error: --task count (1) must match prompt count (2)\n');
  }, 30_000);

  it('task --depends-on that closes a cycle is refused before the task folder exists (issue #32: one startTask check)', async () => {
    const [a, b] = [taskId('cyc-a'), taskId('cyc-b')];
    const dirA = layout.taskDir(PROJECT, a);
    mkdirSync(dirA, { recursive: true });
    writeFileSync(join(dirA, 'TASK.md'), 'a\n');
    writeFileSync(join(dirA, 'TASK-CONFIG.yaml'), `depends_on:\n  - ${b}\n`);
    const res = await run(['task', '--root', tmp.root, '--project', PROJECT, '--task', b, '--agent', 'claude', '--prompt', 'b', '--depends-on', a]);
    expect(res.stderr).toBe(`Error: dependency cycle detected: ${a} -> ${b} -> ${a}\n`);
    expect(res.code).toBe(1);
    expect(existsSync(layout.taskDir(PROJECT, b))).toBe(false);
  }, 30_000);

  it('job --follow prints the agent output while it runs', async () => {
    const task = taskId('follow');
    const result = await run(['job', '-f', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'codex', '--prompt', 'x'], { FAKE_AGENT_TEXT: 'followed text' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"type":"thread.started"');
    expect(result.stdout).toContain('followed text');
  }, 30_000);

  it('task cancel writes CANCELLED, stops the running agent and ends the loop; resume clears it', async () => {
    const task = taskId('cancel');
    const taskDir = layout.taskDir(PROJECT, task);
    const loop = start(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'claude'], cliEnv(home, { FAKE_AGENT_SLEEP_MS: '60000' }), home);
    const info = await waitFor(() => runInfos(taskDir).find((i) => i.commandline), 20_000);
    const noReason = await run(['task', 'cancel', '--root', tmp.root, '--project', PROJECT, '--task', task]);
    expect(noReason.code).toBe(2);
    const cancel = await run(['task', 'cancel', '--root', tmp.root, '--project', PROJECT, '--task', task, '--reason', 'not needed', '--grace', '1s']);
    expect(cancel.stderr).toBe('');
    expect(cancel.stdout).toBe(`task ${PROJECT}/${task} marked as cancelled\nreason: not needed\nstopped runs: 1\n`);
    expect(readFileSync(join(taskDir, 'CANCELLED'), 'utf8')).toMatch(/^cancelled_at: \S+\nreason: not needed\n$/);
    const outcome = await loop.done;
    expect(outcome.code).toBe(1);
    expect(processAlive(info.pid)).toBe(false);
    expect(runInfos(taskDir)).toHaveLength(1);

    const refused = await run(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is cancelled/);
    const resumed = await run(['task', 'resume', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude'], { FAKE_AGENT_DONE: '1' });
    expect(resumed.stderr).toBe(`Resuming task: ${task}\n`);
    expect(resumed.code).toBe(0);
    expect(existsSync(join(taskDir, 'CANCELLED'))).toBe(false);
    // the resumed run by id: run ids of two processes within one second order by pid, not by time
    const last = runInfos(taskDir).find((i) => i.run_id !== info.run_id)!;
    expect(readFileSync(last.prompt_path!, 'utf8').endsWith('\n---\n\nContinue working on the following:\n\nx\n')).toBe(true);
  }, 40_000);

  it('task delete refuses a running task without --force; with --force it stops it first', async () => {
    const task = taskId('delete');
    const taskDir = layout.taskDir(PROJECT, task);
    const loop = start(['task', '--root', tmp.root, '--project', PROJECT, '--task', task, '--prompt', 'x', '--agent', 'claude'], cliEnv(home, { FAKE_AGENT_SLEEP_MS: '60000' }), home);
    const info = await waitFor(() => runInfos(taskDir).find((i) => i.commandline), 20_000);
    const refused = await run(['task', 'delete', '--root', tmp.root, '--project', PROJECT, '--task', task]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`Error: task ${task} has a running run (${info.run_id}); use --force to delete anyway\n`);
    const forced = await run(['task', 'delete', '--root', tmp.root, '--project', PROJECT, '--task', task, '--force']);
    expect(forced.stdout).toBe(`Deleted task: ${task}\n`);
    expect(forced.code).toBe(0);
    await loop.done;
    expect(processAlive(info.pid)).toBe(false);
    expect(existsSync(taskDir)).toBe(false);
  }, 40_000);
});
