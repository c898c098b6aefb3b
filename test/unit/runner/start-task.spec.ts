// The one start-a-task use case (issue #32): refusals write nothing, TASK.md is seeded once, the
// first run is allocated, the thread link is written. Real files, a real command agent.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusWriter, createBusWriters, readMessages } from '@app/messagebus';
import { checkStartTask, isRunnerError, startTask, TaskStartRefused, THREAD_LINK_FILE } from '@app/runner';
import { loadConfig, RunsLayout, writeCancelled, writeDependsOn, writeTaskPromptIfAbsent } from '@app/storage';
import { makeTempRoot } from '../../utils/api-app';

const P = 'proj';
const seed = (dir: string, prompt: string) => {
  mkdirSync(dir, { recursive: true });
  writeTaskPromptIfAbsent(dir, prompt);
};
const T = 'task-20260101-000000-start';

describe('startTask (libs/runner/src/tasks/start-task.ts)', () => {
  let tmp: ReturnType<typeof makeTempRoot>;
  let layout: RunsLayout;
  let base: Parameters<typeof startTask>[0];
  beforeEach(() => {
    tmp = makeTempRoot();
    layout = new RunsLayout(tmp.root);
    base = { layout, writers: createBusWriters(), config: loadConfig(tmp.configPath, { strict: false }), projectId: P, taskId: T, prompt: 'do it', agent: 'fake' };
  });
  afterEach(() => rmSync(tmp.dir, { recursive: true, force: true }));

  it('seeds the task files once, allocates the first run and returns the checked start', async () => {
    const started = await startTask({ ...base, dependsOn: ['task-20260101-000000-dep, '], settings: { max_tokens: 5 } });
    const taskDir = layout.taskDir(P, T);
    expect(started).toMatchObject({ projectId: P, taskId: T, taskDir, dependsOn: ['task-20260101-000000-dep'], agentType: 'command' });
    expect(readFileSync(join(taskDir, 'TASK.md'), 'utf8')).toBe('do it\n');
    expect(readFileSync(join(taskDir, 'TASK-CONFIG.yaml'), 'utf8')).toContain('task-20260101-000000-dep');
    expect(readFileSync(join(taskDir, 'TASK-SETTINGS.yaml'), 'utf8')).toBe('max_tokens: 5\n');
    expect(readdirSync(join(taskDir, 'runs'))).toEqual([started.runId]);
    expect(started.runDir).toBe(join(taskDir, 'runs', started.runId));
    // a second start keeps TASK.md (the prompt is seeded once) and allocates a new run
    const again = await startTask({ ...base, prompt: 'other\n' });
    expect(readFileSync(join(taskDir, 'TASK.md'), 'utf8')).toBe('do it\n');
    expect(readdirSync(join(taskDir, 'runs')).sort()).toEqual([started.runId, again.runId].sort());
  });

  it('refuses an unknown agent or a missing prompt at the preflight and writes nothing', async () => {
    const err = await startTask({ ...base, agent: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskStartRefused);
    expect(err).toMatchObject({ stage: 'preflight', code: 'INVALID_INPUT' });
    await expect(startTask({ ...base, prompt: '' })).rejects.toThrow('TASK.md not found and no prompt provided');
    expect(existsSync(layout.taskDir(P, T))).toBe(false);
    // skipped preflight (an adopted process): the same request is accepted
    await expect(startTask({ ...base, agent: 'nope', skipPreflight: true })).resolves.toMatchObject({ agentType: undefined });
  });

  it('refuses a dependency cycle as a DEPENDENCY_CYCLE and writes nothing', async () => {
    const other = 'task-20260101-000000-other';
    const otherDir = layout.taskDir(P, other);
    seed(otherDir, 'x');
    writeDependsOn(otherDir, [T]);
    const err = await checkStartTask({ ...base, dependsOn: [other] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ stage: 'cycle', message: `dependency cycle detected: ${other} -> ${T} -> ${other}` });
    expect(isRunnerError(err, 'DEPENDENCY_CYCLE')).toBe(true);
    expect(existsSync(layout.taskDir(P, T))).toBe(false);
  });

  it('an explicit resume clears the stop markers; a plain start keeps them', async () => {
    const taskDir = layout.taskDir(P, T);
    seed(taskDir, 'first');
    writeCancelled(taskDir, 'test');
    await startTask(base);
    expect(existsSync(join(taskDir, 'CANCELLED'))).toBe(true);
    await startTask({ ...base, resume: true });
    expect(existsSync(join(taskDir, 'CANCELLED'))).toBe(false);
  });

  it('links a threaded task to its parent message on both buses', async () => {
    const parentTask = 'task-20260101-000000-parent';
    seed(layout.taskDir(P, parentTask), 'parent');
    const parent = await new BusWriter(layout.taskBus(P, parentTask)).append({ type: 'QUESTION', project_id: P, task_id: parentTask, run_id: 'run-1', body: 'which?' });
    const started = await startTask({ ...base, threadParent: parent, linkedAt: '2026-01-01T00:00:00Z' });
    expect(readFileSync(join(layout.taskDir(P, T), THREAD_LINK_FILE), 'utf8')).toContain(`parent_message_id: ${parent.msg_id}\n`);
    const child = readMessages(layout.taskBus(P, T)).find((m) => m.type === 'USER_REQUEST');
    expect(child).toMatchObject({ run_id: started.runId, body: 'do it' });
    const back = readMessages(layout.taskBus(P, parentTask)).find((m) => m.type === 'USER_REQUEST');
    expect(back?.meta).toMatchObject({ thread_child_task_id: T, thread_child_message_id: child!.msg_id });
  });

  it('a config error is not a start the preflight lets through', async () => {
    writeFileSync(tmp.configPath, 'agents: {}\n');
    await expect(startTask({ ...base, config: loadConfig(tmp.configPath, { strict: false }) })).rejects.toBeInstanceOf(TaskStartRefused);
    expect(existsSync(layout.taskDir(P, T))).toBe(false);
  });
});
