import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../../utils/wait';

export const TOOL_NAMES = ['bus_post', 'bus_read', 'task_start', 'task_status', 'task_wait', 'task_stop', 'ask', 'usage', 'list_projects', 'list_tasks'];

/** Calls a tool and returns its JSON answer; a tool error fails with its text. */
export async function call<T = any>(client: Client, name: string, args: Record<string, unknown>, opts: { onprogress?: (p: { progress: number; message?: string }) => void } = {}): Promise<T> {
  const res = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, onprogress: opts.onprogress })) as CallToolResult;
  const text = (res.content[0] as { text: string }).text;
  if (res.isError) throw new Error(`${name}: ${text}`);
  return JSON.parse(text) as T;
}

/** Calls a tool that must fail; returns the error text. */
export async function callError(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError).toBe(true);
  return (res.content[0] as { text: string }).text;
}

/** Resolves with the uri of the next resources/updated notification for `uri`. */
export function nextUpdate(client: Client, uri: string, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no resources/updated for ${uri}`)), timeoutMs);
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (n.params.uri === uri) {
        clearTimeout(timer);
        resolve(n.params.uri);
      }
    });
  });
}

/** Replaces the per-message values (msg_id, ts) so two bus files written at different times compare. */
export function normaliseBus(text: string): string {
  return text.replace(/^msg_id: .*$/gm, 'msg_id: X').replace(/^ts: .*$/gm, 'ts: X');
}

/**
 * The common acceptance path for one connected client: lists the tools, starts a sub-task with
 * the fake agent, waits for it with progress, reads its output resource. Returns what it saw.
 */
export async function startWaitAndReadOutput(client: Client, args: Record<string, unknown>, expectedText: string) {
  const started = await call(client, 'task_start', args);
  expect(started).toMatchObject({ project_id: expect.any(String), task_id: expect.stringMatching(/^task-/), run_id: expect.stringMatching(/^\d{8}-\d{10}-\d+-\d+$/) });
  const progress: { progress: number; message?: string }[] = [];
  const waited = await call(client, 'task_wait', { task: started.task_id, project: started.project_id, timeout_seconds: 90 }, { onprogress: (p) => progress.push(p) });
  expect(waited.timed_out).toBe(false);
  expect(waited.finished).toBe(true);
  expect(['completed', 'done']).toContain(waited.state);
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.at(-1)!.message).toContain(started.task_id);
  const run = waited.runs.find((r: { run_id: string }) => r.run_id === started.run_id);
  expect(run).toMatchObject({ status: 'completed', exit_code: 0 });
  const output = await client.readResource({ uri: run.output_uri });
  expect((output.contents[0] as { text: string }).text).toContain(expectedText);
  const status = await call(client, 'task_status', { task: started.task_id, project: started.project_id });
  expect(status.state).toBe(waited.state);
  return { started, waited };
}

/**
 * `ask` with wait: the QUESTION lands on the task bus (the task is in needs_input), `answer`
 * answers it from outside (CLI or API), and the pending tool call returns the answer.
 */
export async function askAndAwaitAnswer(client: Client, scope: { project?: string; task?: string }, answer: (questionId: string) => Promise<void>) {
  const question = `Postgres or SQLite? ${Math.random().toString(36).slice(2, 8)}`;
  const pending = call(client, 'ask', { ...scope, body: question, wait: true, timeout_s: 60 });
  const found = await waitFor('the QUESTION on the bus', async (): Promise<{ msg_id: string; type: string } | undefined> => {
    const read = await call(client, 'bus_read', { ...scope, limit: 50 });
    return read.messages.find((m: { body: string }) => m.body === question);
  }, { intervalMs: 100 });
  expect(found).toMatchObject({ type: 'QUESTION', meta: { needs_input: 'true' } });
  await answer(found.msg_id);
  const answered = await pending;
  expect(answered).toEqual({ msg_id: found.msg_id, answer_id: expect.stringMatching(/^MSG-/), answer: 'SQLite.' });
  const noWait = await call(client, 'ask', { ...scope, body: 'no wait?' });
  expect(noWait.msg_id).toMatch(/^MSG-/);
  return noWait.msg_id as string;
}

/** `usage` over a finished sub-task equals the usage its run-info recorded. */
export async function usageOfSubTask(client: Client, project: string, taskId: string, runUsage: Record<string, number>) {
  const report = await call(client, 'usage', { project, task: taskId });
  expect(report.tree.runs).toBe(1);
  expect(report.tree.usage).toEqual(runUsage);
  expect(report.total_tokens).toBe(runUsage.input_tokens + runUsage.output_tokens);
  return report;
}
