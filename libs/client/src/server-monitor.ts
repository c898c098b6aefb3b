import { ApiTaskDetail, checkTodoItem, decideFromTaskDetail, parseTodo } from '@app/orchestration';
import { readUserFile } from '@app/storage';
import { expectStatus, parseJson, query, seg, ServerClient } from './server-client';
import { sleep } from './sse';

export interface ServerMonitorRunOptions {
  project: string;
  todoPath: string;
  agent: string;
  intervalMs: number;
  staleAfterMs: number;
  rateLimitMs: number;
  dryRun?: boolean;
  once?: boolean;
  json?: boolean;
}

/**
 * `conductor monitor`: the TODO-driven monitor through the API, one pass every interval until
 * SIGINT or SIGTERM (once: one pass). Each pass decides per unchecked item (decideFromTaskDetail)
 * and starts, resumes, recovers or finalizes the task through the server.
 */
export async function runServerMonitor(client: ServerClient, opts: ServerMonitorRunOptions): Promise<void> {
  const { project, todoPath, agent, intervalMs, staleAfterMs, rateLimitMs } = opts;
  let stopped = false;
  const stop = (): void => void (stopped = true);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    for (;;) {
      await monitorPassOnServer(client, { project, todoPath, agent, staleAfterMs, rateLimitMs, dryRun: opts.dryRun === true, json: opts.json === true });
      if (opts.once || intervalMs === 0) return;
      for (let waited = 0; waited < intervalMs && !stopped; waited += 100) await sleep(Math.min(100, intervalMs - waited));
      if (stopped) return;
    }
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

async function monitorPassOnServer(
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
      entry.result = await act(client, o, todo, decision.action, detail?.done === true, decision.runId);
      out(`  [OK]    ${entry.result}`);
    } catch (err) {
      entry.result = `error: ${err instanceof Error ? err.message : String(err)}`;
      out(`  [ERROR] ${decision.action} ${todo.taskId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (o.json) process.stdout.write(`${JSON.stringify({ todo: o.todoPath, server: client.base, decisions: report })}\n`);
}

async function act(
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
