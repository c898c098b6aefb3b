import { useState } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, describeError } from '../api/client';
import type { TaskListItem, UsageTotals } from '../api/types';
import { usePoll } from '../hooks/usePoll';
import { formatCost, formatTokens, holdText, totalOf } from '../data/usage';

function Row({ label, runs, u }: { label: string; runs: number; u: UsageTotals }) {
  return (
    <tr>
      <td>{label}</td>
      <td>{runs}</td>
      <td>{formatTokens(u.input_tokens)}</td>
      <td>{formatTokens(u.output_tokens)}</td>
      <td>{formatTokens(u.cache_read_tokens)}</td>
      <td>{formatTokens(totalOf(u))}</td>
      <td>{formatCost(u.cost_usd)}</td>
    </tr>
  );
}

/** Usage of the selected task and of its tree, its hold state, and pause/unpause (#18). */
export function UsagePanel(props: { project: string; task: string; item?: TaskListItem; notify: (text: string, error?: boolean) => void; onChange: () => void }) {
  const { project, task, item } = props;
  const report = usePoll(`${project}/${task}`, () => api.taskUsage(project, task), 5000);
  const [busy, setBusy] = useState(false);
  const paused = item?.paused === 'task';
  const toggle = async () => {
    setBusy(true);
    try {
      await api.setPaused(project, task, !paused);
      props.notify(`${task} ${paused ? 'unpaused' : 'paused'}`);
      props.onChange();
    } catch (err) {
      props.notify(describeError(err), true);
    } finally {
      setBusy(false);
    }
  };
  const r = report.data;
  const hold = holdText(item);
  return (
    <section className="usage-panel" aria-label="Usage">
      {hold && (
        <div className="usage-hold" role="status">
          <span className="status status-held">{item?.status}</span> {hold}
        </div>
      )}
      {r && (
        <table>
          <thead>
            <tr>
              <th>Usage</th>
              <th>Runs</th>
              <th>Input</th>
              <th>Output</th>
              <th>Cache read</th>
              <th>Tokens</th>
              <th>Cost</th>
            </tr>
          </thead>
          <tbody>
            <Row label="This task" runs={r.runs} u={r.usage} />
            {r.tree && <Row label="Task tree" runs={r.tree.runs} u={r.tree.usage} />}
          </tbody>
        </table>
      )}
      <Button onClick={() => void toggle()} disabled={busy || item?.done}>
        {paused ? 'Unpause task' : 'Pause task'}
      </Button>
    </section>
  );
}
