import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateTaskSettings, writeTaskSettings } from '@app/runner';
import { RunsLayout, writeRunInfo, ZERO_TIME } from '@app/storage';
import { createApiApp, TestApi } from '../../utils/api-app';
import { startCli } from '../../utils/cli';
import { cliEnv, PROJECT, runInfos, taskId, tempRoot, waitFor } from './helpers';

// Issue #33 with real processes (built bin/run-agent, fake agents): beyond max_children_per_run a
// `run-agent job` waits as `queued` with its reason in status and the API; --no-wait and a tree
// past its total exit 2 with one line.
describe('fan-out governor: a child beyond its limit is queued, visible everywhere (built CLI)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = join(tmp.root, '..', 'home');
  mkdirSync(home, { recursive: true });
  let api: TestApi | undefined;
  const releases: string[] = [];
  const started: Promise<unknown>[] = [];
  afterAll(async () => {
    // a failed assertion leaves jobs waiting: let them end before the folder goes
    for (const r of releases) writeFileSync(r, '');
    await Promise.all(started);
    await api?.close();
    tmp.cleanup();
  });
  const start = (args: string[], extra: Record<string, string> = {}) => {
    const cli = startCli(args, { env: cliEnv(home, extra), cwd: home });
    started.push(cli.done);
    return cli;
  };
  const job = (task: string, parent: string, release: string, ...more: string[]) => {
    releases.push(release);
    return start(['job', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', 'claude', '--prompt', 'x', '--parent-run-id', parent, ...more], { FAKE_AGENT_WAIT_FILE: release });
  };

  it('queues the second child (status and API show queued with the reason), refuses --no-wait and a full tree, then runs it', async () => {
    const rootTask = taskId('qroot');
    const { runId: parent, dir } = layout.allocateRunDir(PROJECT, rootTask);
    writeRunInfo(join(dir, 'run-info.yaml'), {
      version: 1, run_id: parent, project_id: PROJECT, task_id: rootTask, agent: 'claude', pid: 0, pgid: 0,
      start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    writeTaskSettings(layout.taskDir(PROJECT, rootTask), validateTaskSettings({ max_children_per_run: 1, max_runs_per_tree: 4 }));
    const [k1, k2] = [taskId('q1'), taskId('q2')];
    const rel = (t: string) => join(home, `release-${t}`);

    const first = job(k1, parent, rel(k1));
    await waitFor('the first child started its agent', () => runInfos(layout.taskDir(PROJECT, k1)).some((i) => i.pid > 0 && !i.starting));
    const second = job(k2, parent, rel(k2));
    await waitFor('the second child is queued', () => runInfos(layout.taskDir(PROJECT, k2)).some((i) => !!i.queued_reason));
    const reason = `queued: children per run limit (1) reached: run ${parent} has 1 running children (limit set by max_children_per_run of task ${rootTask})`;

    const status = await start(['status', '--root', tmp.root, '--project', PROJECT, '--task', k2]).done;
    expect(status.code).toBe(0);
    const [header, row] = status.stdout.trim().split('\n');
    expect(header).toMatch(/^TASK_ID\s+STATUS\s.*QUEUED_REASON$/);
    expect(row).toMatch(new RegExp(`^${k2}\\s+queued\\s`));
    expect(row.endsWith(reason)).toBe(true);
    const json = await start(['status', '--root', tmp.root, '--project', PROJECT, '--task', k2, '--json']).done;
    expect(JSON.parse(json.stdout)).toMatchObject({ tasks: [{ task_id: k2, status: 'queued', queued_reason: reason }] });

    api = await createApiApp({ root: tmp.root });
    const flat = await api.app.inject({ method: 'GET', url: `/api/projects/${PROJECT}/runs/flat` });
    expect(flat.statusCode).toBe(200);
    const queuedRun = (flat.json() as { runs: { task_id: string; status: string; display_status: string; queued_reason?: string }[] }).runs.find((r) => r.task_id === k2);
    expect(queuedRun).toMatchObject({ status: 'running', display_status: 'queued', queued_reason: reason });

    const noWait = await job(taskId('q3'), parent, rel('q3'), '--no-wait').done;
    expect(noWait.code).toBe(2);
    expect(noWait.stderr).toBe(`Error: children per run limit (1) reached: run ${parent} has 1 running children (limit set by max_children_per_run of task ${rootTask}); not queued (--no-wait)\n`);
    // the tree holds the parent and two children: with a total of 3 a further child is refused, never queued
    writeTaskSettings(layout.taskDir(PROJECT, rootTask), validateTaskSettings({ max_children_per_run: 1, max_runs_per_tree: 3 }));
    const full = await job(taskId('q4'), parent, rel('q4')).done;
    expect(full.code).toBe(2);
    expect(full.stderr).toBe(`Error: runs per task tree limit (3) reached: the tree of run ${parent} has 3 runs (limit set by max_runs_per_tree of task ${rootTask})\n`);

    writeFileSync(rel(k1), '');
    expect((await first.done).code).toBe(0);
    await waitFor('the second child started its agent', () => runInfos(layout.taskDir(PROJECT, k2)).some((i) => i.pid > 0 && !i.starting));
    expect(runInfos(layout.taskDir(PROJECT, k2))[0].queued_reason).toBeUndefined();
    writeFileSync(rel(k2), '');
    expect((await second.done).code).toBe(0);
    expect(runInfos(layout.taskDir(PROJECT, k2))[0].status).toBe('completed');
  }, 60_000);
});
