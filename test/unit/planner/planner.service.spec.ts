import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { MessageBusService } from '@app/messagebus';
import { createChangeFeed, RunInfo, writeRunInfo, ZERO_TIME } from '@app/storage';
import { PlannerService } from '@app/planner';
import { plannerStatePath } from '@app/planner';
import type { LaunchRequest, TaskLauncher } from '@app/planner';
import { waitFor } from '../../utils/wait';

/**
 * A launcher that behaves like the real one on disk: launching writes a `running` run-info for
 * the pre-allocated run (owned by this live process), finishing marks it completed and returns.
 */
class DiskLauncher implements TaskLauncher {
  readonly launched: LaunchRequest[] = [];
  private readonly pending = new Map<string, () => void>();

  constructor(private readonly writeRunInfoOnLaunch = true) {}

  async launch(req: LaunchRequest): Promise<void> {
    this.launched.push(req);
    if (this.writeRunInfoOnLaunch) writeRun(req.runDir, req, 'running');
    await new Promise<void>((resolve) => this.pending.set(req.runId, resolve));
  }

  finish(runId: string): void {
    const req = this.launched.find((r) => r.runId === runId);
    if (!req) throw new Error(`run ${runId} was never launched`);
    writeRun(req.runDir, req, 'completed');
    this.pending.get(runId)!();
  }

  runIds(): string[] {
    return this.launched.map((r) => r.runId);
  }
}

function writeRun(runDir: string, ids: { projectId: string; taskId: string; runId: string }, status: 'running' | 'completed', parent?: string): void {
  mkdirSync(runDir, { recursive: true });
  const info: RunInfo = {
    version: 1,
    run_id: ids.runId,
    parent_run_id: parent,
    project_id: ids.projectId,
    task_id: ids.taskId,
    agent: 'command',
    pid: status === 'running' ? process.pid : 0,
    pgid: 0,
    start_time: new Date(),
    end_time: status === 'running' ? ZERO_TIME : new Date(),
    exit_code: status === 'running' ? -1 : 0,
    status,
    agent_version: '',
  };
  writeRunInfo(join(runDir, 'run-info.yaml'), info);
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(PlannerService.name, () => {
  let root: string;
  let seq = 0;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'planner-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function submission(taskId: string, project = 'proj'): LaunchRequest & { request?: any } {
    seq++;
    const runId = `20260101-0000000000-${process.pid}-${seq}`;
    const runDir = join(root, project, taskId, 'runs', runId);
    mkdirSync(runDir, { recursive: true });
    return { projectId: project, taskId, runId, runDir, prompt: `do ${taskId}\n`, agentType: 'command', config: { FOO: 'bar' } };
  }

  function planner(limit: number, launcher: TaskLauncher, extra: Partial<ConstructorParameters<typeof PlannerService>[0]> = {}): PlannerService {
    return new PlannerService({ root, limit, rescheduleIntervalMs: 0, ...extra }, launcher, new MessageBusService(createChangeFeed()));
  }

  it('launches at once and writes no state when max_concurrent_root_tasks is 0', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(0, launcher);
    const a = submission('task-20260101-000000-aaa');

    expect(sut.enabled).toBe(false);
    expect(await sut.submit(a)).toEqual({ status: 'started' });
    expect(launcher.runIds()).toEqual([a.runId]);
    expect(existsSync(plannerStatePath(root))).toBe(false);
    launcher.finish(a.runId);
    await sut.idle();
  });

  it('queues beyond the limit and starts the next task when a launched one returns', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    const a = submission('task-20260101-000000-aaa');
    const b = submission('task-20260101-000000-bbb');
    const c = submission('task-20260101-000000-ccc');

    expect(await sut.submit(a)).toEqual({ status: 'started' });
    expect(await sut.submit(b)).toEqual({ status: 'queued', queuePosition: 1 });
    expect(await sut.submit(c)).toEqual({ status: 'queued', queuePosition: 2 });
    expect(sut.queuePosition('proj', b.taskId)).toBe(1);
    expect(sut.queuePosition('proj', a.taskId)).toBeUndefined();
    expect(sut.queuedCount()).toBe(2);
    expect(launcher.runIds()).toEqual([a.runId]);

    launcher.finish(a.runId);
    await tick();
    expect(launcher.runIds()).toEqual([a.runId, b.runId]);
    expect(sut.queuePosition('proj', c.taskId)).toBe(1);

    launcher.finish(b.runId);
    await tick();
    launcher.finish(c.runId);
    await sut.idle();
    expect(launcher.runIds()).toEqual([a.runId, b.runId, c.runId]);
    expect(sut.queuedCount()).toBe(0);
  });

  it('hands the launcher the first-run prompt, agent, config and run folder', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    const a = submission('task-20260101-000000-aaa');
    const b = { ...submission('task-20260101-000000-bbb'), projectRoot: root, attachMode: 'resume' };
    await sut.submit(a);
    await sut.submit(b);
    launcher.finish(a.runId);
    await tick();

    expect(launcher.launched[1]).toEqual({
      projectId: 'proj',
      taskId: b.taskId,
      runId: b.runId,
      runDir: b.runDir,
      prompt: b.prompt,
      agentType: 'command',
      config: { FOO: 'bar' },
      projectRoot: root,
      attachMode: 'resume',
    });
    launcher.finish(b.runId);
    await sut.idle();
  });

  it('persists the queue with upstream keys and lower-cased Go request fields', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    const a = submission('task-20260101-000000-aaa');
    const b = submission('task-20260101-000000-bbb');
    await sut.submit(a);
    await sut.submit({ ...b, request: { project_id: 'proj', task_id: b.taskId, agent_type: 'command', prompt: 'original', depends_on: [a.taskId] } });

    const doc = parse(readFileSync(plannerStatePath(root), 'utf8'));
    expect(Object.keys(doc)).toEqual(['version', 'limit', 'next_order', 'updated_at', 'entries']);
    expect(doc).toMatchObject({ version: 1, limit: 1, next_order: 3 });
    expect(doc.entries).toHaveLength(2);
    const [running, queued] = doc.entries;
    expect(Object.keys(running)).toEqual(['run_id', 'project_id', 'task_id', 'run_dir', 'run_prompt', 'request', 'submitted_at', 'order', 'state', 'started_at']);
    expect(running).toMatchObject({ run_id: a.runId, project_id: 'proj', task_id: a.taskId, run_dir: a.runDir, run_prompt: a.prompt, order: 1, state: 'running' });
    expect(Object.keys(queued)).not.toContain('started_at');
    expect(queued).toMatchObject({ state: 'queued', order: 2, run_prompt: b.prompt });
    expect(queued.request).toEqual({
      projectid: 'proj',
      taskid: b.taskId,
      agenttype: 'command',
      prompt: 'original',
      config: {},
      projectroot: '',
      attachmode: '',
      processimport: null,
      dependson: [a.taskId],
      threadparent: null,
      threadmessagetype: '',
    });
    expect(running.request).toMatchObject({ projectid: 'proj', taskid: a.taskId, prompt: a.prompt, config: { FOO: 'bar' } });
    launcher.finish(a.runId);
    await tick();
    launcher.finish(b.runId);
    await sut.idle();
  });

  it('recovers after a restart: the interrupted loop (no DONE) first, in a fresh run folder, then the queued entry (issue #11)', async () => {
    const first = new DiskLauncher();
    const before = planner(1, first);
    const a = submission('task-20260101-000000-aaa');
    const b = submission('task-20260101-000000-bbb');
    await before.submit(a);
    expect(await before.submit(b)).toMatchObject({ status: 'queued' });
    before.beforeApplicationShutdown();
    // the old server is gone; its task's run ends on its own
    first.finish(a.runId);
    await before.idle();
    expect(first.runIds()).toEqual([a.runId]);

    const second = new DiskLauncher();
    const after = planner(1, second);
    after.onApplicationBootstrap();
    // a's loop ended without DONE while no server owned it: restarted (adopting a live agent)
    expect(second.launched).toHaveLength(1);
    expect(second.launched[0]).toMatchObject({ taskId: a.taskId, prompt: a.prompt, adopt: true });
    expect(second.launched[0].runId).not.toBe(a.runId);
    writeFileSync(join(root, 'proj', a.taskId, 'DONE'), '');
    second.finish(second.launched[0].runId);
    await tick();
    expect(second.runIds().slice(1)).toEqual([b.runId]);
    expect(second.launched[1]).toMatchObject({ prompt: b.prompt, agentType: 'command', config: { FOO: 'bar' } });
    second.finish(b.runId);
    await after.idle();
    expect(parse(readFileSync(plannerStatePath(root), 'utf8')).entries).toEqual([]);
  });

  it('counts running root runs on disk (e.g. started by the CLI) against the limit, but not child runs', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    const cli = { projectId: 'other', taskId: 'task-20260101-000000-cli', runId: 'cli-run-1' };
    const child = { projectId: 'other', taskId: 'task-20260101-000000-kid', runId: 'child-run-1' };
    writeRun(join(root, 'other', child.taskId, 'runs', child.runId), child, 'running', 'cli-run-1');
    writeRun(join(root, 'other', cli.taskId, 'runs', cli.runId), cli, 'running');

    const a = submission('task-20260101-000000-aaa');
    expect(await sut.submit(a)).toEqual({ status: 'queued', queuePosition: 1 });
    expect(launcher.runIds()).toEqual([]);

    // the CLI run ends: the periodic re-check hands its slot to the queue
    writeRun(join(root, 'other', cli.taskId, 'runs', cli.runId), cli, 'completed');
    sut.reschedule();
    expect(launcher.runIds()).toEqual([a.runId]);
    expect(await sut.submit(submission('task-20260101-000000-bbb'))).toEqual({ status: 'queued', queuePosition: 1 });
    launcher.finish(a.runId);
    await tick();
    launcher.finish(launcher.runIds()[1]);
    await sut.idle();
  });

  it('after bootstrap, re-checks free slots on its own while entries are queued', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher, { rescheduleIntervalMs: 10 });
    const cli = { projectId: 'other', taskId: 'task-20260101-000000-cli', runId: 'cli-run-1' };
    writeRun(join(root, 'other', cli.taskId, 'runs', cli.runId), cli, 'running');
    const a = submission('task-20260101-000000-aaa');
    expect(await sut.submit(a)).toMatchObject({ status: 'queued' });
    sut.onApplicationBootstrap();

    writeRun(join(root, 'other', cli.taskId, 'runs', cli.runId), cli, 'completed');
    await waitFor('the planner to launch the queued entry on its own', () => launcher.launched.length > 0);
    expect(launcher.runIds()).toEqual([a.runId]);
    sut.beforeApplicationShutdown();
    launcher.finish(a.runId);
    await sut.idle();
  });

  it('drops queued entries of a cancelled task and of a task marked DONE', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    const a = submission('task-20260101-000000-aaa');
    const b = submission('task-20260101-000000-bbb');
    const c = submission('task-20260101-000000-ccc');
    await sut.submit(a);
    await sut.submit(b);
    await sut.submit(c);

    await sut.dropTask('proj', b.taskId);
    expect(sut.queuePosition('proj', b.taskId)).toBeUndefined();
    expect(sut.queuePosition('proj', c.taskId)).toBe(1);

    writeFileSync(join(root, 'proj', c.taskId, 'DONE'), '');
    expect(sut.queuePosition('proj', c.taskId)).toBeUndefined();
    expect(sut.queuedCount()).toBe(0);

    launcher.finish(a.runId);
    await sut.idle();
    expect(launcher.runIds()).toEqual([a.runId]);
  });

  it('after a restart, re-queues (and relaunches) a started entry whose run never wrote run-info within the grace period', async () => {
    let now = new Date('2026-01-01T00:00:00Z');
    const crashed = new DiskLauncher(false);
    const before = planner(1, crashed, { now: () => now, unknownGraceMs: 5000 });
    const a = submission('task-20260101-000000-aaa');
    await before.submit(a);
    before.beforeApplicationShutdown(); // the server died before the agent started

    const launcher = new DiskLauncher(false);
    const after = planner(1, launcher, { now: () => now, unknownGraceMs: 5000 });
    now = new Date(now.getTime() + 4000);
    after.onApplicationBootstrap();
    expect(launcher.runIds()).toEqual([]);

    now = new Date(now.getTime() + 2000);
    after.onApplicationBootstrap();
    expect(launcher.runIds()).toEqual([a.runId]);
    after.beforeApplicationShutdown();
  });

  it('a loop of this process keeps its slot between Ralph attempts, and its later attempts are not counted twice', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    const a = submission('task-20260101-000000-aaa');
    const b = submission('task-20260101-000000-bbb');
    await sut.submit(a);
    // the first attempt ended; the loop has not returned (restart delay before attempt 2)
    writeRun(a.runDir, a, 'completed');
    expect(await sut.submit(b)).toEqual({ status: 'queued', queuePosition: 1 });
    // attempt 2 runs: still one slot in use, b still waits
    writeRun(join(root, 'proj', a.taskId, 'runs', 'attempt-2'), { ...a, runId: 'attempt-2' }, 'running');
    expect(sut.queuePosition('proj', b.taskId)).toBe(1);
    expect(launcher.runIds()).toEqual([a.runId]);

    writeRun(join(root, 'proj', a.taskId, 'runs', 'attempt-2'), { ...a, runId: 'attempt-2' }, 'completed');
    launcher.finish(a.runId);
    await tick();
    expect(launcher.runIds()).toEqual([a.runId, b.runId]);
    launcher.finish(b.runId);
    await sut.idle();
  });

  it('reads (queue positions, counts, recovery) never create or rewrite an unchanged state file', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(2, launcher);
    expect(sut.queuePosition('proj', 'task-20260101-000000-aaa')).toBeUndefined();
    expect(sut.queuedCount()).toBe(0);
    sut.onApplicationBootstrap();
    expect(existsSync(plannerStatePath(root))).toBe(false);

    const a = submission('task-20260101-000000-aaa');
    await sut.submit(a);
    const written = readFileSync(plannerStatePath(root), 'utf8');
    expect(sut.queuedCount()).toBe(0);
    expect(readFileSync(plannerStatePath(root), 'utf8')).toBe(written);
    launcher.finish(a.runId);
    await sut.idle();
  });

  it('launches nothing in monitoring mode (task start disabled) but still answers started', async () => {
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher, { taskStartEnabled: false });
    expect(await sut.submit(submission('task-20260101-000000-aaa'))).toEqual({ status: 'started' });
    sut.onApplicationBootstrap();
    expect(launcher.runIds()).toEqual([]);
  });

  it('ignores malformed and duplicate entries in a hand-edited state file', async () => {
    const a = submission('task-20260101-000000-aaa');
    mkdirSync(join(root, '.conductor'), { recursive: true });
    const entry = (runId: string) =>
      `    - run_id: ${runId}\n      project_id: proj\n      task_id: ${a.taskId}\n      run_dir: ${a.runDir}\n      run_prompt: hi\n      request:\n        projectid: proj\n        taskid: ${a.taskId}\n        agenttype: command\n        prompt: hi\n      submitted_at: 2026-01-01T00:00:00Z\n      order: 4\n      state: queued\n`;
    writeFileSync(
      plannerStatePath(root),
      `version: 1\nlimit: 1\nnext_order: 2\nentries:\n${entry(a.runId)}${entry(a.runId)}    - run_id: ""\n      project_id: proj\n      state: queued\n`,
    );
    const launcher = new DiskLauncher();
    const sut = planner(1, launcher);
    sut.onApplicationBootstrap();
    expect(launcher.launched).toEqual([expect.objectContaining({ runId: a.runId, prompt: 'hi', agentType: 'command' })]);
    const doc = parse(readFileSync(plannerStatePath(root), 'utf8'));
    expect(doc.entries).toHaveLength(1);
    expect(doc.next_order).toBe(5);
    launcher.finish(a.runId);
    await sut.idle();
  });
});
