import { formatClock, formatUptime, isZeroTime, tabulate } from './format';
import { ClientOptions, out, printRaw } from './output';
import { ServerClient } from './server-client';

export interface StatusResponse {
  active_runs_count: number;
  uptime_seconds: number;
  configured_agents?: string[];
  version: string;
  running_tasks?: { project_id: string; task_id: string; run_id: string; agent: string; started?: string }[];
}

export async function serverStatus(client: ServerClient, _args: string[], opts: ClientOptions): Promise<void> {
  const { data, text } = await client.getJson<StatusResponse>('/api/v1/status');
  if (opts.json) return printRaw(text);
  const agents = (data.configured_agents ?? []).join(', ') || '(none)';
  out(
    tabulate([
      ['Version:', data.version],
      ['Uptime:', formatUptime(data.uptime_seconds)],
      ['Active Runs:', String(data.active_runs_count)],
      ['Configured Agents:', agents],
    ]),
  );
  const running = data.running_tasks ?? [];
  if (running.length === 0) return;
  out('\nRunning tasks:\n');
  const rows = [['  PROJECT', 'TASK', 'RUN', 'AGENT', 'STARTED']];
  for (const t of running) {
    const runId = t.run_id.length > 20 ? `${t.run_id.slice(0, 20)}...` : t.run_id;
    rows.push([`  ${t.project_id}`, t.task_id, runId, t.agent, isZeroTime(t.started) ? '-' : formatClock(t.started!)]);
  }
  out(tabulate(rows));
}

