import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScheduleConfig } from '@app/storage';
import { readScheduleRecord, SchedulerService, TaskStarter, TaskStartRequest, TriggersOptions } from '@app/triggers';

/** A TaskStarter port that records what it is asked (the lib's only outside dependency). */
class RecordingStarter implements TaskStarter {
  started: TaskStartRequest[] = [];
  stopped: string[] = [];
  active = new Set<string>();
  onStart?: (req: TaskStartRequest) => void;
  fail?: string;
  async start(req: TaskStartRequest) {
    this.onStart?.(req);
    if (this.fail) throw new Error(this.fail);
    this.started.push(req);
    this.active.add(req.task_id);
    return { project_id: req.project_id, task_id: req.task_id, run_id: 'r1', status: 'started' };
  }
  isActive(_p: string, t: string) {
    return this.active.has(t);
  }
  async stop(_p: string, t: string) {
    this.stopped.push(t);
    this.active.delete(t);
  }
}

function schedule(concurrency: ScheduleConfig['concurrency']): ScheduleConfig {
  return { name: 'job', cron: '0 0 1 1 *', timezone: 'UTC', missed: 'skip', max_missed: 1, concurrency, task: { project_id: 'p', prompt: 'go', agent_type: 'fake' } };
}

describe('SchedulerService firing', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'sched-unit-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const service = (s: ScheduleConfig, starter: TaskStarter) => new SchedulerService({ root, schedules: { [s.name]: s }, triggers: {}, runSchedules: false } satisfies TriggersOptions, starter);

  it('claims the run durably before the task starts (a crash then never starts it twice)', async () => {
    const starter = new RecordingStarter();
    let seenAtStart: string | undefined;
    starter.onStart = (req) => (seenAtStart = readScheduleRecord(root, 'job')?.history.find((h) => h.task_id === req.task_id)?.outcome);
    const run = await service(schedule('skip'), starter).fireNow('job');
    expect(seenAtStart).toBe('claimed');
    expect(run.outcome).toBe('started');
    expect(readScheduleRecord(root, 'job')?.history.map((h) => h.outcome)).toEqual(['started']);
  });

  it('concurrency skip: an active previous task means no new task', async () => {
    const starter = new RecordingStarter();
    const svc = service(schedule('skip'), starter);
    await svc.fireNow('job');
    const second = await svc.fireNow('job');
    expect(second.outcome).toBe('skipped_running');
    expect(starter.started).toHaveLength(1);
  });

  it('concurrency replace: the previous task is stopped and a new one started', async () => {
    const starter = new RecordingStarter();
    const svc = service(schedule('replace'), starter);
    const first = await svc.fireNow('job');
    const second = await svc.fireNow('job');
    expect(starter.stopped).toEqual([first.task_id]);
    expect(second.outcome).toBe('started');
    expect(second.task_id).not.toBe(first.task_id);
  });

  it('concurrency queue: one run waits (durably) for the previous task, then starts; a further one is skipped', async () => {
    const starter = new RecordingStarter();
    const svc = service(schedule('queue'), starter);
    const first = await svc.fireNow('job');
    const second = await svc.fireNow('job');
    expect(second.outcome).toBe('waiting');
    expect((await svc.fireNow('job')).outcome).toBe('skipped_running');
    await svc.check('job');
    expect(starter.started.map((r) => r.task_id)).toEqual([first.task_id]); // still waiting: the first is active
    starter.active.delete(first.task_id!);
    // a new service (a server restart) finds the waiting run in the record and starts it
    await service(schedule('queue'), starter).check('job');
    expect(starter.started.map((r) => r.task_id)).toEqual([first.task_id, second.task_id]);
    expect(readScheduleRecord(root, 'job')?.history.map((h) => h.outcome)).toEqual(['started', 'started', 'skipped_running']);
  });

  it('a failed start is recorded with its error and not retried', async () => {
    const starter = new RecordingStarter();
    starter.fail = 'agent missing';
    const run = await service(schedule('skip'), starter).fireNow('job');
    expect(run).toMatchObject({ outcome: 'failed', error: 'agent missing' });
    expect(readScheduleRecord(root, 'job')?.history).toHaveLength(1);
  });

  it('an unknown schedule is NOT_FOUND', async () => {
    await expect(service(schedule('skip'), new RecordingStarter()).fireNow('other')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
