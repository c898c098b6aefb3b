import type { ScheduleConfig } from '@app/storage';
import { planSlots, slotsBetween } from '@app/triggers';

function schedule(over: Partial<ScheduleConfig> = {}): ScheduleConfig {
  return { name: 's', cron: '0 * * * *', timezone: 'UTC', missed: 'skip', max_missed: 10, concurrency: 'skip', task: { project_id: 'p', prompt: 'x', agent_type: '' }, ...over };
}

const at = (iso: string) => new Date(iso);
const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe('schedule slots', () => {
  // last slot 00:00, server down until 05:30, now 06:10: slots 01..05 missed, 06:00 came while up
  const last = at('2026-01-01T00:00:00Z');
  const upSince = at('2026-01-01T05:30:00Z');
  const now = at('2026-01-01T06:10:00Z');

  it('skip drops the slots missed while down and fires the live one', () => {
    const plan = planSlots(schedule({ missed: 'skip' }), last, now, upSince);
    expect(iso(plan.fire)).toEqual(['2026-01-01T06:00:00.000Z']);
    expect(plan.skipped).toHaveLength(5);
  });

  it('run_once fires only the newest missed slot', () => {
    const plan = planSlots(schedule({ missed: 'run_once' }), last, now, upSince);
    expect(iso(plan.fire)).toEqual(['2026-01-01T05:00:00.000Z', '2026-01-01T06:00:00.000Z']);
    expect(iso(plan.skipped)).toEqual(['2026-01-01T01:00:00.000Z', '2026-01-01T02:00:00.000Z', '2026-01-01T03:00:00.000Z', '2026-01-01T04:00:00.000Z']);
  });

  it('run_all fires the newest max_missed missed slots, oldest first', () => {
    const plan = planSlots(schedule({ missed: 'run_all', max_missed: 3 }), last, now, upSince);
    expect(iso(plan.fire)).toEqual(['2026-01-01T03:00:00.000Z', '2026-01-01T04:00:00.000Z', '2026-01-01T05:00:00.000Z', '2026-01-01T06:00:00.000Z']);
    expect(plan.skipped).toHaveLength(2);
  });

  it('never returns the last handled slot again', () => {
    expect(planSlots(schedule({ missed: 'run_all' }), at('2026-01-01T06:00:00Z'), now, upSince).fire).toEqual([]);
  });

  it('reads the cron in its time zone', () => {
    const s = schedule({ cron: '0 9 * * *', timezone: 'Europe/Berlin' });
    expect(iso(slotsBetween(s, at('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z')))).toEqual(['2026-01-01T08:00:00.000Z']);
  });

  it('bounds the scan after a long downtime to the newest slots', () => {
    const s = schedule({ cron: '* * * * * *' });
    const slots = slotsBetween(s, at('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z'));
    expect(slots.length).toBeLessThanOrEqual(5000);
    expect(slots[slots.length - 1].toISOString()).toBe('2026-01-02T00:00:00.000Z');
  });
});
