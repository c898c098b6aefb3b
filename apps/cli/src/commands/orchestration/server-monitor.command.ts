import { resolve } from 'node:path';
import { Option, SubCommand } from 'nest-commander';
import { ApiTaskDetail, checkTodoItem, decideFromTaskDetail, DEFAULT_MONITOR_INTERVAL_MS, DEFAULT_MONITOR_RATE_LIMIT_MS, DEFAULT_MONITOR_STALE_MS, parseTodo } from '@app/runner';
import { pathExists, readUserFile, validateProjectId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { durationFlag } from '../engine/support/options';
import { ClientCommand, ClientOptions } from '../server/client/client-command';
import { expectStatus, parseJson, query, seg, ServerClient } from '../server/client/server-client';
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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
    let stopped = false;
    const stop = (): void => void (stopped = true);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      for (;;) {
        await this.pass(client, { project, todoPath, agent, staleAfterMs, rateLimitMs, dryRun: opts.dryRun === true, json: opts.json === true });
        if (opts.once || intervalMs === 0) return;
        for (let waited = 0; waited < intervalMs && !stopped; waited += 100) await sleep(Math.min(100, intervalMs - waited));
        if (stopped) return;
      }
    } finally {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
    }
  }

  private async pass(
    client: ServerClient,
    o: { project: string; todoPath: string; agent: string; staleAfterMs: number; rateLimitMs: number; dryRun: boolean; json: boolean },
  ): Promise<void> {
    const out = (line: string): void => void (o.json || process.stdout.write(`${line}\n`));
    const todos = parseTodo(readUserFile(o.todoPath));
    const report: Array<{ task_id: string; action: string; reason: string; result?: string }> = [];
    if (todos.length === 0) out(`monitor: no pending task IDs found in ${o.todoPath}`);
    else out(`monitor: checking ${todos.length} pending task(s) from ${o.todoPath} on ${client.base}`);
    let first = true;
    for (const todo of todos) {
      const res = await client.send('GET', `/api/projects/${seg(o.project)}/tasks/${seg(todo.taskId)}${query({ include_files: 1 })}`);
      const detail = res.status === 404 ? undefined : parseJson<ApiTaskDetail>(expectStatus(res).text);
      const decision = decideFromTaskDetail(detail, { staleAfterMs: o.staleAfterMs });
      const entry: (typeof report)[number] = { task_id: todo.taskId, action: decision.action, reason: decision.reason };
      report.push(entry);
      out(`  [${decision.action.padEnd(8)}] ${todo.taskId} — ${decision.reason}`);
      if (decision.action === 'skip') continue;
      if (!first) await sleep(o.rateLimitMs);
      first = false;
      if (o.dryRun) continue;
      try {
        entry.result = await this.act(client, o, todo, decision.action, detail?.done === true, decision.runId);
        out(`  [OK]    ${entry.result}`);
      } catch (err) {
        entry.result = `error: ${err instanceof Error ? err.message : String(err)}`;
        out(`  [ERROR] ${decision.action} ${todo.taskId}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (o.json) process.stdout.write(`${JSON.stringify({ todo: o.todoPath, server: client.base, decisions: report })}\n`);
  }

  private async act(
    client: ServerClient,
    o: { project: string; todoPath: string; agent: string },
    todo: { taskId: string; text: string },
    action: string,
    done: boolean,
    runId: string | undefined,
  ): Promise<string> {
    const submit = async (attachMode: 'create' | 'resume'): Promise<string> => {
      const body = { project_id: o.project, task_id: todo.taskId, agent_type: o.agent, prompt: todo.text, attach_mode: attachMode };
      const res = await client.call('POST', '/api/v1/tasks', { body });
      return parseJson<{ run_id?: string }>(res.text).run_id ?? '';
    };
    switch (action) {
      case 'finalize':
        // A completed run with output: the server writes DONE (task cancel with nothing running).
        if (!done) await client.call('DELETE', `/api/v1/tasks/${seg(todo.taskId)}${query({ project_id: o.project })}`);
        return checkTodoItem(o.todoPath, todo.taskId) ? `finalized ${todo.taskId} (item ticked)` : `finalized ${todo.taskId} (no unchecked item left)`;
      case 'recover':
        if (runId) await client.call('POST', `/api/projects/${seg(o.project)}/tasks/${seg(todo.taskId)}/runs/${seg(runId)}/stop`, { expect: [202, 409] });
        return `restarted stale task ${todo.taskId} as run ${await submit('resume')}`;
      case 'resume':
        return `resumed ${todo.taskId} as run ${await submit('resume')}`;
      default:
        return `started ${todo.taskId} as run ${await submit('create')}`;
    }
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
