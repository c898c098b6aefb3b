import { ServerClient, ServerClientError, parseJson, seg } from './server-client';
import { readSse, reconnectDelays, sleep } from './sse';

interface TaskRuns {
  runs?: { run_id?: string; id?: string; status?: string }[];
}

export class NoRunsYet extends ServerClientError {}

/** The last running run of the task, else its last run (upstream's choice). */
export async function latestRunId(client: ServerClient, project: string, task: string): Promise<string> {
  const res = await client.send('GET', `/api/projects/${seg(project)}/tasks/${seg(task)}`);
  if (res.status === 404) throw new ServerClientError(`task logs: task ${task} not found in project ${project}`, 404);
  if (res.status !== 200) throw new ServerClientError(`task logs: server returned ${res.status}: ${res.text.trim()}`, res.status);
  const runs = (parseJson<TaskRuns>(res.text).runs ?? []).map((r) => ({ id: r.run_id ?? r.id ?? '', status: r.status }));
  if (runs.length === 0) throw new NoRunsYet(`task logs: no runs found for task ${task}`);
  const running = [...runs].reverse().find((r) => r.status === 'running');
  return (running ?? runs[runs.length - 1]).id;
}

/** Waits (polling) until the task has a run, for `job submit --follow`. */
export async function waitForRunStart(client: ServerClient, project: string, task: string, maxWaitMs = 30_000, pollMs = 1000): Promise<string> {
  const deadline = Date.now() + maxWaitMs;
  for (;;) {
    try {
      return await latestRunId(client, project, task);
    } catch (err) {
      if (!(err instanceof NoRunsYet)) throw err;
      if (Date.now() > deadline) throw new ServerClientError(`timed out waiting for run to start for task ${task}`);
    }
    await sleep(pollMs);
  }
}

export interface LogStreamOptions {
  project: string;
  task: string;
  run?: string;
  follow: boolean;
  tail: number;
  write?: (text: string) => void;
}

/**
 * Streams a run's stdout over SSE (#46) until `event: done`. With follow, a dropped connection is
 * re-opened with backoff (2 s doubling to 30 s); each reconnect replays the file from its start,
 * so already printed bytes are skipped.
 */
export async function streamTaskLogs(client: ServerClient, opts: LogStreamOptions): Promise<void> {
  const write = opts.write ?? ((text: string) => process.stdout.write(text));
  const runId = opts.run || (await latestRunId(client, opts.project, opts.task));
  const path = `/api/projects/${seg(opts.project)}/tasks/${seg(opts.task)}/runs/${seg(runId)}/stream?name=stdout`;
  const delays = reconnectDelays();
  let retry = delays.first;
  let printed = 0;
  let collected = '';
  for (;;) {
    let seen = 0;
    let done = false;
    try {
      const res = await client.openStream(path);
      done = await readSse(res, (ev) => {
        if (ev.event === 'done') return true;
        if (ev.event !== 'message') return false;
        const chunk = ev.data;
        const fresh = seen + chunk.length > printed ? chunk.slice(Math.max(0, printed - seen)) : '';
        seen += chunk.length;
        if (fresh) {
          printed += fresh.length;
          if (opts.tail > 0) collected += fresh;
          else write(fresh);
        }
        return false;
      });
    } catch (err) {
      if (!opts.follow || (err instanceof ServerClientError && err.status !== undefined && err.status < 500)) {
        throw new ServerClientError(`task logs: ${(err as Error).message}`, (err as ServerClientError).status);
      }
    }
    if (done || !opts.follow) break;
    await sleep(retry);
    retry = Math.min(retry * 2, delays.max);
  }
  if (opts.tail > 0) {
    const lines = collected.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    for (const line of lines.slice(-opts.tail)) write(`${line}\n`);
  }
}
