import { resolve } from 'node:path';
import { Option, SubCommand } from 'nest-commander';
import { DEFAULT_MONITOR_INTERVAL_MS, DEFAULT_MONITOR_RATE_LIMIT_MS, DEFAULT_MONITOR_STALE_MS } from '@app/orchestration';
import { pathExists, validateProjectId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { durationFlag } from '../engine/support/options';
import { ClientOptions, runServerMonitor, ServerClient } from '@app/client';
import { ClientCommand } from '../server/client/client-command';
import { required } from './flags';

interface ServerMonitorOptions extends ClientOptions {
  project?: string;
  todo?: string;
  agent?: string;
  interval?: string;
  staleAfter?: string;
  rateLimit?: string;
  dryRun?: boolean;
  once?: boolean;
}

/** `conductor monitor` (= `run-agent server monitor`): the TODO-driven monitor through the API. */
@SubCommand({
  name: 'monitor',
  description:
    'TODO-driven automation through a conductor server: for each unchecked "- [ ] ... task-<id> ..." item, start tasks the ' +
    'server does not know (POST /api/v1/tasks, prompt = the item text), resume failed ones, recover runs quiet for ' +
    '--stale-after (stop the run, start again), and finalize completed runs with output (server writes DONE, the item is ' +
    'ticked). One pass every --interval; --once does one pass.',
})
export class ServerMonitorCommand extends ClientCommand<ServerMonitorOptions> {
  async execute(_args: string[], opts: ServerMonitorOptions, client: ServerClient): Promise<void> {
    const project = validateProjectId(required(opts.project, '--project'));
    const todoPath = resolve(opts.todo ?? 'TODOs.md');
    if (!pathExists(todoPath)) throw new UsageError(`TODO file not found: ${todoPath}`);
    const agent = opts.agent?.trim() || 'claude';
    const intervalMs = opts.interval !== undefined ? durationFlag(opts.interval, '--interval') : DEFAULT_MONITOR_INTERVAL_MS;
    const staleAfterMs = (opts.staleAfter !== undefined ? durationFlag(opts.staleAfter, '--stale-after') : 0) || DEFAULT_MONITOR_STALE_MS;
    const rateLimitMs = (opts.rateLimit !== undefined ? durationFlag(opts.rateLimit, '--rate-limit') : 0) || DEFAULT_MONITOR_RATE_LIMIT_MS;
    await runServerMonitor(client, { project, todoPath, agent, intervalMs, staleAfterMs, rateLimitMs, dryRun: opts.dryRun === true, once: opts.once === true, json: opts.json === true });
  }

  @Option({ flags: '--project <id>', description: 'project id (required)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--todo <file>', description: 'TODO file with "- [ ] <text with task id>" items (default TODOs.md)' })
  parseTodo(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <type>', description: 'agent type for started tasks (default claude)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--interval <duration>', description: 'time between passes; 0 = one pass (default 30s)' })
  parseInterval(v: string): string {
    return v;
  }

  @Option({ flags: '--stale-after <duration>', description: 'a running task without activity for this long is restarted; 0 = 20m (default 20m)' })
  parseStaleAfter(v: string): string {
    return v;
  }

  @Option({ flags: '--rate-limit <duration>', description: 'pause between successive actions; 0 = 2s (default 2s)' })
  parseRateLimit(v: string): string {
    return v;
  }

  @Option({ flags: '--dry-run', description: 'print the decisions only; change nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--once', description: 'one pass, then exit' })
  parseOnce(): boolean {
    return true;
  }
}
