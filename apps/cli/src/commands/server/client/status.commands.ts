import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientCommand, ClientOptions, out, printRaw, requireFlag } from './client-command';
import { formatClock, formatRfc3339, formatUptime, isZeroTime, tabulate } from './format';
import { parseJson, ServerClient } from './server-client';

interface StatusResponse {
  active_runs_count: number;
  uptime_seconds: number;
  configured_agents?: string[];
  version: string;
  running_tasks?: { project_id: string; task_id: string; run_id: string; agent: string; started?: string }[];
}

@SubCommand({ name: 'status', description: 'Show conductor server status' })
export class ServerStatusCommand extends ClientCommand {
  async execute(_args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
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
}

interface SelfUpdateStatus {
  state: string;
  binary_path?: string;
  requested_at?: string;
  started_at?: string;
  finished_at?: string;
  active_runs_now: number;
  active_runs_error?: string;
  last_error?: string;
  last_note?: string;
}

@SubCommand({ name: 'status', description: 'Show current server self-update state' })
export class ServerUpdateStatusCommand extends ClientCommand {
  async execute(_args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
    const { data: s, text } = await client.getJson<SelfUpdateStatus>('/api/v1/admin/self-update');
    if (opts.json) return printRaw(text);
    const rows = [
      ['State:', s.state],
      ['Active Root Runs:', String(s.active_runs_now)],
    ];
    if (s.active_runs_error) rows.push(['Active Run Error:', s.active_runs_error]);
    if (s.binary_path) rows.push(['Candidate Binary:', s.binary_path]);
    if (!isZeroTime(s.requested_at)) rows.push(['Requested At:', formatRfc3339(s.requested_at!)]);
    if (!isZeroTime(s.started_at)) rows.push(['Started At:', formatRfc3339(s.started_at!)]);
    if (!isZeroTime(s.finished_at)) rows.push(['Finished At:', formatRfc3339(s.finished_at!)]);
    if (s.last_error) rows.push(['Last Error:', s.last_error]);
    if (s.last_note) rows.push(['Last Note:', s.last_note]);
    out(tabulate(rows));
  }
}

interface UpdateStartOptions extends ClientOptions {
  binary?: string;
}

@SubCommand({ name: 'start', description: 'Request a safe server self-update to a new binary' })
export class ServerUpdateStartCommand extends ClientCommand<UpdateStartOptions> {
  async execute(_args: string[], opts: UpdateStartOptions, client: ServerClient): Promise<void> {
    const binary = requireFlag(opts.binary, 'binary');
    const res = await client.call('POST', '/api/v1/admin/self-update', { body: { binary_path: binary }, expect: [202] });
    if (opts.json) return printRaw(res.text);
    const s = parseJson<SelfUpdateStatus>(res.text);
    out(`Self-update state: ${s.state}\n`);
    out(s.state === 'deferred' ? `Update is waiting for ${s.active_runs_now} active root run(s) to finish.\n` : 'Update handoff has started.\n');
  }

  @Option({ flags: '--binary <path>', description: 'path to the candidate run-agent binary (required)' })
  parseBinary(value: string): string {
    return value;
  }
}

@SubCommand({ name: 'update', description: 'Request or inspect safe server self-update', subCommands: [ServerUpdateStatusCommand, ServerUpdateStartCommand] })
export class ServerUpdateCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
