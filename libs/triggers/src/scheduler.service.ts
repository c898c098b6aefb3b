import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomSlug, ScheduleConfig, utcStamp } from '@app/storage';
import { listSchedules, ScheduleView } from './schedule-view';
import { nextSlot, planSlots } from './slots';
import { readScheduleRecord, ScheduleRecord, ScheduleRun, writeScheduleRecord } from './state';
import { TASK_STARTER, TaskStarter, TriggerError } from './task-starter';
import { TRIGGERS_OPTIONS, TriggersOptions } from './triggers.options';

/** Longest wait between two checks (a clock step is noticed within it). */
const MAX_WAIT_MS = 30_000;
/** How often a run waiting behind an active task (concurrency `queue`) looks again. */
const QUEUE_CHECK_MS = 1000;
/** History outcome of a run claimed under concurrency `queue`, not started yet. */
const WAITING = 'waiting';

/** The newest run that has a task (a waiting run has none yet). */
function lastTask(history: ScheduleRun[]): ScheduleRun | undefined {
  return [...history].reverse().find((h) => h.task_id && h.project_id && h.outcome !== WAITING);
}

/** A task id slug from a schedule or trigger name (3–50 of [a-z0-9-], alphanumeric at both ends). */
export function slugOf(name: string, suffix = ''): string {
  let s = name.replace(/_/g, '-').slice(0, 40).replace(/-+$/, '');
  if (s.length < 3) s = `${s}-run`;
  return suffix ? `${s}-${suffix}` : s;
}

/**
 * Runs the configured schedules (docs/triggers.md). Exactly once per slot, at most once on a
 * crash: each slot is claimed in the schedule's record (atomic write + fsync) BEFORE its task is
 * started, so a crash between the claim and the start loses that slot rather than firing it twice
 * (the history shows it as `claimed`). Slots missed while the server was down follow the
 * schedule's missed-run policy; a slot whose previous task is still active follows its
 * concurrency policy (`queue`: one run waits, durably, for the previous task to end).
 */
@Injectable()
export class SchedulerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('schedules');
  private readonly upSince = new Date();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** One operation at a time per schedule (cron pass, fire now). */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    @Inject(TRIGGERS_OPTIONS) private readonly opts: TriggersOptions,
    @Inject(TASK_STARTER) private readonly starter: TaskStarter,
  ) {}

  onApplicationBootstrap(): void {
    if (this.opts.runSchedules && Object.keys(this.opts.schedules).length > 0) void this.pass();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  list(): ScheduleView[] {
    return listSchedules(this.opts.root, this.opts.schedules).map((v) => ({ ...v, history: v.history.map((h) => this.withStatus(h)) }));
  }

  /** Starts the schedule's task now (not a slot: the cron slots are unchanged); concurrency applies. */
  fireNow(name: string): Promise<ScheduleRun> {
    const s = this.opts.schedules[name];
    if (!s) return Promise.reject(new TriggerError('NOT_FOUND', `schedule ${JSON.stringify(name)} not found`));
    return this.serial(name, () => this.fire(s, undefined));
  }

  /** Does now what the timer does for one schedule: a waiting run (`queue`), then the due slots. */
  check(name: string): Promise<void> {
    const s = this.opts.schedules[name];
    return s ? this.serial(name, () => this.runDue(s)) : Promise.resolve();
  }

  private withStatus(h: ScheduleRun): ScheduleRun {
    if (!h.task_id || !h.project_id) return h;
    return { ...h, active: this.starter.isActive(h.project_id, h.task_id) };
  }

  private serial<T>(name: string, op: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(name) ?? Promise.resolve();
    const next = prev.then(op, op);
    this.chains.set(name, next.catch(() => undefined));
    return next;
  }

  private async pass(): Promise<void> {
    if (this.stopped) return;
    for (const s of Object.values(this.opts.schedules)) {
      await this.serial(s.name, () => this.runDue(s)).catch((err) => this.logger.error(`schedule ${s.name}: ${(err as Error).message}`));
    }
    if (this.stopped) return;
    const now = Date.now();
    const next = Math.min(...Object.values(this.opts.schedules).map((s) => nextSlot(s, new Date(now))?.getTime() ?? Infinity));
    const queued = Object.values(this.opts.schedules).some((s) => s.concurrency === 'queue' && this.waits(s.name));
    const wait = Math.max(0, Math.min(queued ? QUEUE_CHECK_MS : MAX_WAIT_MS, next - now + 5));
    this.timer = setTimeout(() => void this.pass(), wait);
    this.timer.unref?.();
  }

  private waits(name: string): boolean {
    try {
      return !!readScheduleRecord(this.opts.root, name)?.history.some((h) => h.outcome === WAITING);
    } catch {
      return false;
    }
  }

  private async runDue(s: ScheduleConfig): Promise<void> {
    if (s.concurrency === 'queue') await this.startWaiting(s);
    const now = new Date();
    let rec = readScheduleRecord(this.opts.root, s.name);
    if (!rec) {
      // first start: nothing before now is "missed"
      rec = { schedule: s.name, last_slot: now.toISOString(), history: [] };
      writeScheduleRecord(this.opts.root, rec);
      return;
    }
    const plan = planSlots(s, new Date(rec.last_slot), now, this.upSince);
    if (plan.skipped.length > 0) {
      for (const slot of plan.skipped.slice(-20)) rec.history.push({ slot: slot.toISOString(), fired_at: now.toISOString(), outcome: 'skipped_missed' });
      rec.last_slot = plan.skipped[plan.skipped.length - 1].toISOString();
      writeScheduleRecord(this.opts.root, rec);
    }
    for (const slot of plan.fire) await this.fire(s, slot);
  }

  /** One firing: concurrency, then the claim (durable), then the start, then its outcome. */
  private async fire(s: ScheduleConfig, slot: Date | undefined): Promise<ScheduleRun> {
    const rec: ScheduleRecord = readScheduleRecord(this.opts.root, s.name) ?? { schedule: s.name, last_slot: new Date().toISOString(), history: [] };
    const firedAt = new Date();
    if (slot && slot.getTime() <= new Date(rec.last_slot).getTime()) return { slot: slot.toISOString(), fired_at: firedAt.toISOString(), outcome: 'already_fired' };
    const prev = lastTask(rec.history);
    const waiting = rec.history.find((h) => h.outcome === WAITING);
    const entry: ScheduleRun = { slot: slot?.toISOString(), fired_at: firedAt.toISOString(), project_id: s.task.project_id, outcome: 'claimed' };
    entry.task_id = `task-${utcStamp(slot ?? firedAt)}-${slugOf(s.name, slot ? '' : `m${randomSlug(4)}`)}`;
    if (slot) rec.last_slot = slot.toISOString();
    const busy = !!prev && this.starter.isActive(prev.project_id!, prev.task_id!);
    if ((busy && s.concurrency === 'skip') || (s.concurrency === 'queue' && waiting)) {
      const why = waiting ? `run ${waiting.task_id} already waits` : `previous task ${prev!.task_id} is still active`;
      rec.history.push({ slot: entry.slot, fired_at: entry.fired_at, outcome: 'skipped_running', error: why });
      writeScheduleRecord(this.opts.root, rec);
      return rec.history[rec.history.length - 1];
    }
    if (busy && s.concurrency === 'queue') {
      // claimed as waiting: started by a later pass once the previous task is no longer active
      rec.history.push({ ...entry, outcome: WAITING });
      writeScheduleRecord(this.opts.root, rec);
      return rec.history[rec.history.length - 1];
    }
    if (busy) {
      await this.starter.stop(prev!.project_id!, prev!.task_id!);
      entry.error = `replaced ${prev!.task_id}`;
    }
    rec.history.push(entry);
    writeScheduleRecord(this.opts.root, rec); // the claim: from here on this slot never fires again
    return this.start(s, rec, entry);
  }

  /** Concurrency `queue`: starts the waiting run once the task before it is no longer active. */
  private async startWaiting(s: ScheduleConfig): Promise<void> {
    const rec = readScheduleRecord(this.opts.root, s.name);
    const entry = rec?.history.find((h) => h.outcome === WAITING);
    if (!rec || !entry) return;
    const prev = lastTask(rec.history.slice(0, rec.history.indexOf(entry)));
    if (prev && this.starter.isActive(prev.project_id!, prev.task_id!)) return;
    entry.outcome = 'claimed';
    writeScheduleRecord(this.opts.root, rec);
    await this.start(s, rec, entry);
  }

  private async start(s: ScheduleConfig, rec: ScheduleRecord, entry: ScheduleRun): Promise<ScheduleRun> {
    try {
      const res = await this.starter.start({ ...s.task, task_id: entry.task_id!, source: `schedule ${s.name}` });
      entry.outcome = res.status;
    } catch (err) {
      entry.outcome = 'failed';
      entry.error = (err as Error).message;
      this.logger.warn(`schedule ${s.name}: start ${entry.task_id}: ${entry.error}`);
    }
    writeScheduleRecord(this.opts.root, rec);
    return entry;
  }
}
