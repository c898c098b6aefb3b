import type { BusMessage as RestMessage } from '@app/contracts';
import { formatLocal, formatUtc, parseDuration, tabulate } from './format';
import { out, ProjectOptions, requireFlag } from './output';
import { expectStatus, parseJson, seg, ServerClient, ServerClientError } from './server-client';
import { readSse, reconnectDelays, sleep } from './sse';

export interface WatchStatus {
  task_id: string;
  status: string;
  run_count: number;
  done: boolean;
}

const TERMINAL = new Set(['completed', 'failed', 'done', 'error']);

export interface WatchOptions extends ProjectOptions {
  task?: string[];
  timeout?: string;
  interval?: string;
}

/** Every task of the project: the offset-paged list (#32, at most 500 a page) walked to its end. */
async function allTaskStatuses(client: ServerClient, project: string): Promise<WatchStatus[]> {
  const all: WatchStatus[] = [];
  for (let offset = 0; ; ) {
    const { data } = await client.getJson<{ items?: { id: string; status: string; run_count: number }[]; has_more?: boolean }>(`/api/projects/${seg(project)}/tasks?limit=500&offset=${offset}`);
    const items = data.items ?? [];
    all.push(...items.map((t) => ({ task_id: t.id, status: t.status, run_count: t.run_count, done: TERMINAL.has(t.status) })));
    if (!data.has_more || items.length === 0) return all;
    offset += items.length;
  }
}

async function oneTaskStatus(client: ServerClient, project: string, task: string): Promise<WatchStatus> {
  const res = await client.send('GET', `/api/projects/${seg(project)}/tasks/${seg(task)}`);
  if (res.status === 404) return { task_id: task, status: 'not_found', run_count: 0, done: false };
  expectStatus(res, [200]);
  const d = parseJson<{ status: string; done?: boolean; runs?: unknown[] }>(res.text);
  return { task_id: task, status: d.status, run_count: d.runs?.length ?? 0, done: !!d.done || TERMINAL.has(d.status) };
}

export async function watchTasks(client: ServerClient, _args: string[], opts: WatchOptions): Promise<void> {
  const project = requireFlag(opts.project, 'project');
  const timeoutText = opts.timeout ?? '30m';
  const timeoutMs = parseDuration(timeoutText, '--timeout');
  const intervalMs = parseDuration(opts.interval ?? '5s', '--interval');
  const tasks = opts.task ?? [];
  const deadline = Date.now() + timeoutMs;
  if (!opts.json) out(tasks.length === 0 ? `Watching all tasks in project "${project}"...\n` : `Watching ${tasks.length} task(s) in project "${project}"...\n`);
  for (let poll = 1; ; poll++) {
    const statuses = tasks.length === 0 ? await allTaskStatuses(client, project) : await Promise.all(tasks.map((t) => oneTaskStatus(client, project, t)));
    if (tasks.length === 0 && statuses.length === 0) {
      if (!opts.json) out(`No tasks found in project "${project}".\n`);
      throw new ServerClientError(`no tasks found in project "${project}"`);
    }
    const allDone = statuses.length > 0 && statuses.every((s) => s.done);
    if (!opts.json) {
      out(`[${formatLocal(new Date().toISOString(), true)}] Poll #${poll}\n`);
      out(tabulate([['TASK ID', 'STATUS', 'RUNS'], ...statuses.map((s) => [s.task_id, s.status, String(s.run_count)])], 3) + '\n');
    }
    if (allDone) {
      out(opts.json ? `${JSON.stringify({ tasks: statuses, all_done: true })}\n` : 'All tasks completed.\n');
      return;
    }
    if (Date.now() >= deadline) throw new ServerClientError(`timeout after ${timeoutText}: not all tasks completed`);
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/** A REST message; `ts` is the field name of bus lines read from a stream file. */
export type BusLineMessage = Omit<RestMessage, 'timestamp' | 'type'> & { timestamp?: string; ts?: string; type: string };

export function formatBusLine(msg: BusLineMessage): string {
  const ts = msg.timestamp ?? msg.ts ?? new Date(0).toISOString();
  const nl = msg.body.indexOf('\n');
  const body = nl >= 0 ? `${msg.body.slice(0, nl)}...` : msg.body;
  return `[${formatUtc(ts)}] ${msg.type.padEnd(12)}  ${body}`;
}

function busPath(project: string, task?: string): string {
  return task ? `/api/projects/${seg(project)}/tasks/${seg(task)}/messages` : `/api/projects/${seg(project)}/messages`;
}

export interface BusReadOptions extends ProjectOptions {
  task?: string;
  tail?: number;
  follow?: boolean;
}

export async function readBus(client: ServerClient, _args: string[], opts: BusReadOptions): Promise<void> {
  const project = requireFlag(opts.project, 'project');
  const path = busPath(project, opts.task);
  let messages = (await client.getJson<{ messages?: BusLineMessage[] }>(path)).data.messages ?? [];
  const tail = opts.tail ?? 0;
  if (tail > 0 && messages.length > tail) messages = messages.slice(-tail);
  if (opts.json) out(JSON.stringify(messages, null, 2) + '\n');
  else if (messages.length === 0) out('(no messages)\n');
  else out(messages.map((m) => formatBusLine(m) + '\n').join(''));
  if (!opts.follow) return;

  // Resume the stream after the last message shown, so nothing is printed twice.
  let lastId = messages.length ? messages[messages.length - 1].msg_id : undefined;
  const seen = new Set(messages.map((m) => m.msg_id));
  const delays = reconnectDelays();
  let retry = delays.first;
  for (;;) {
    try {
      const res = await client.openStream(`${path}/stream`, undefined, lastId ? { 'Last-Event-ID': lastId } : {});
      retry = delays.first;
      const ended = await readSse(res, (ev) => {
        if (ev.event === 'done') return true;
        if (ev.event !== 'message' || !ev.data || ev.data === '{}') return false;
        let msg: BusLineMessage;
        try {
          msg = JSON.parse(ev.data) as BusLineMessage;
        } catch {
          return false;
        }
        if (!msg.msg_id || seen.has(msg.msg_id)) return false;
        seen.add(msg.msg_id);
        lastId = msg.msg_id;
        out(opts.json ? JSON.stringify(msg) + '\n' : formatBusLine(msg) + '\n');
        return false;
      });
      if (ended) return;
      out(`[run-agent server bus] connection lost: stream closed unexpectedly; reconnecting in ${retry / 1000}s...\n`);
    } catch (err) {
      if (err instanceof ServerClientError && err.status !== undefined && err.status < 500) throw err;
      out(`[run-agent server bus] connection lost: ${(err as Error).message}; reconnecting in ${retry / 1000}s...\n`);
    }
    await sleep(retry);
    retry = Math.min(retry * 2, delays.max);
  }
}

export interface BusPostOptions extends ProjectOptions {
  task?: string;
  type?: string;
  body?: string;
}

async function readStdinIfPiped(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function postBus(client: ServerClient, _args: string[], opts: BusPostOptions): Promise<void> {
  const project = requireFlag(opts.project, 'project');
  const body = opts.body || (await readStdinIfPiped()) || '';
  const res = await client.call('POST', busPath(project, opts.task), { body: { type: opts.type ?? 'INFO', body }, expect: [200, 201] });
  if (opts.json) return out(`${res.text.trim()}\n`);
  out(`msg_id: ${parseJson<{ msg_id: string }>(res.text).msg_id}\n`);
}
