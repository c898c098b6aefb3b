import { useState } from 'react';
import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, describeError } from '../api/client';
import type { Schedule } from '../api/types';
import { nextFireText, outcomeText, recentRuns } from '../data/schedules';

function ScheduleItem(props: { schedule: Schedule; now: number; notify: (text: string, error?: boolean) => void; onFired: () => void; onSelect: (project: string, task: string) => void }) {
  const { schedule: s } = props;
  const [busy, setBusy] = useState(false);
  const fire = async () => {
    setBusy(true);
    try {
      const res = await api.fireSchedule(s.name);
      props.notify(`${s.name}: ${outcomeText(res.run)}${res.run.task_id ? ` (${res.run.task_id})` : ''}`, res.run.outcome === 'failed');
      props.onFired();
    } catch (err) {
      props.notify(describeError(err), true);
    } finally {
      setBusy(false);
    }
  };
  const runs = recentRuns(s);
  return (
    <li className="schedule" data-schedule={s.name}>
      <div className="schedule-head">
        <strong className="schedule-name">{s.name}</strong>
        <Button inline onClick={() => void fire()} disabled={busy} aria-label={`Fire now: ${s.name}`}>
          Fire now
        </Button>
      </div>
      <div className="schedule-meta">
        <code>{s.cron}</code> {s.timezone} · {s.project_id} ·{' '}
        <span className="schedule-next" title={s.next_fire}>
          next {nextFireText(s, props.now)}
        </span>
      </div>
      {s.error && <div className="schedule-error">{s.error}</div>}
      {runs.length > 0 && (
        <details className="schedule-history">
          <summary>History ({s.history.length})</summary>
          <ul>
            {runs.map((r) => (
              <li key={`${r.fired_at}-${r.task_id ?? r.slot ?? ''}`} className={`schedule-run outcome-${r.outcome}`}>
                <time dateTime={r.fired_at}>{new Date(r.fired_at).toLocaleString()}</time> {r.slot ? '' : '(manual) '}
                {outcomeText(r)}
                {r.task_id && r.project_id && (
                  <>
                    {' '}
                    <Button inline onClick={() => props.onSelect(r.project_id!, r.task_id!)}>
                      {r.task_id}
                    </Button>
                    {r.active ? ' · active' : ''}
                  </>
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

/** The configured schedules (docs/triggers.md): next fire time, run history, fire one now. */
export function SchedulesPanel(props: { schedules: Schedule[]; now: number; notify: (text: string, error?: boolean) => void; onFired: () => void; onSelect: (project: string, task: string) => void }) {
  if (props.schedules.length === 0) return null;
  return (
    <Island className="panel schedules" aria-label="Schedules" role="region">
      <IslandHeader border className="panel-header">
        Schedules ({props.schedules.length})
      </IslandHeader>
      <ul>
        {props.schedules.map((s) => (
          <ScheduleItem key={s.name} schedule={s} now={props.now} notify={props.notify} onFired={props.onFired} onSelect={props.onSelect} />
        ))}
      </ul>
    </Island>
  );
}
