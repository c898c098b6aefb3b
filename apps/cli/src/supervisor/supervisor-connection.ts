/**
 * One client of the task supervisor. The protocol, newline-delimited JSON over the Unix socket
 * (bin/task-client.js is the other end):
 * - client → `{"argv": ["task" | "job", …], "cwd": "…", "env": {…}, "pid": n, "tty": bool, "columns": n}`,
 *   later `{"signal": "SIGINT"}`;
 * - supervisor → `{"pid": n}`, then `{"err": "text"}` for each write to the command's stderr, then
 *   `{"exit": code}`; or `{"fallback": "why"}` when the client must run the command itself
 *   (`--help`, a usage error for commander to word, another working directory).
 * A client that goes away (closed socket) or sends a signal stops its loop and agent, as a SIGINT'd
 * or killed in-process `task` does. The command runs in the client's environment (`env`): the
 * supervisor's own lacks the per-run variables (per-run-env.ts) that differ between its clients.
 */
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { clearPendingChild, signalStopReason, writePendingMarker } from '@app/runner';
import { errorReport } from '../common/cli-errors';
import type { JobFlags } from '../commands/engine/job-flags';
import type { TaskFlags } from '../commands/engine/task-flags';
import type { PlainSeams } from '../fast/plain-root';
import { parseHotCommand } from '../fast/run-hot';

/** A request line longer than this (an argv of megabytes) ends the connection. */
const MAX_LINE_CHARS = 1 << 20;

interface TaskRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** The client's pid: a sub-agent `job`'s pending-child marker names it (the client lives as long as the job). */
  pid: number;
  tty?: boolean;
  columns?: number;
}

const isStrings = (v: unknown): boolean => !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

function asRequest(value: unknown): TaskRequest | undefined {
  const r = value as Partial<TaskRequest> | null;
  if (!r || typeof r !== 'object' || !Array.isArray(r.argv) || !r.argv.every((a) => typeof a === 'string') || typeof r.cwd !== 'string') return undefined;
  if (!isStrings(r.env) || !Number.isInteger(r.pid) || (r.pid as number) <= 0) return undefined;
  return r as TaskRequest;
}

/** Serves one connection to its end; never rejects. */
export function serveTaskClient(conn: Socket, root: PlainSeams): Promise<void> {
  const abort = new AbortController();
  const send = (msg: object): void => {
    if (!conn.destroyed && conn.writable) conn.write(`${JSON.stringify(msg)}\n`);
  };
  let buffered = '';
  let started: Promise<void> | undefined;
  let clientPid: number | undefined;
  return new Promise<void>((resolve) => {
    conn.setEncoding('utf8');
    conn.on('error', () => undefined);
    conn.on('close', () => {
      abort.abort(`run-agent (pid ${clientPid ?? '?'}) went away`);
      void (started ?? Promise.resolve()).then(resolve);
    });
    conn.on('data', (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_LINE_CHARS) return void conn.destroy(); // not a client of ours
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let msg: unknown;
        try {
          msg = JSON.parse(line);
        } catch {
          conn.destroy();
          return;
        }
        if (started) {
          const signal = (msg as { signal?: unknown }).signal;
          // the stop reason an in-process runner records, with the client's pid
          if (typeof signal === 'string' && /^SIG[A-Z]{2,6}$/.test(signal)) abort.abort(signalStopReason(signal, clientPid));
          continue;
        }
        const request = asRequest(msg);
        if (!request) return void conn.destroy();
        clientPid = request.pid;
        send({ pid: process.pid });
        started = runRequest(request, root, abort.signal, send).then(() => void conn.end(() => conn.destroy()));
      }
    });
  });
}

/** Runs one request; whatever it throws is the client's error line and exit code, never the supervisor's crash. */
async function runRequest(request: TaskRequest, root: PlainSeams, signal: AbortSignal, send: (msg: object) => void): Promise<void> {
  try {
    await runTaskRequest(request, root, signal, send);
  } catch (err) {
    const report = errorReport(err, false);
    send({ err: report.line });
    send({ exit: report.exitCode });
  }
}

async function runTaskRequest(request: TaskRequest, root: PlainSeams, signal: AbortSignal, send: (msg: object) => void): Promise<void> {
  const command = request.argv[0];
  const parsed = command === 'task' || command === 'job' ? parseHotCommand(request.argv) : undefined;
  if (!parsed) return send({ fallback: 'not a task or job this supervisor runs (help, a usage error or a subcommand)' });
  // its client prints the run's output itself
  if (parsed.options.follow === true) return send({ fallback: '`job --follow` streams the output in its own process' });
  // the socket's name binds the working directory; a client elsewhere runs the task itself
  if (request.cwd !== process.cwd()) return send({ fallback: `the supervisor runs in ${process.cwd()}` });
  const stderr = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        send({ err: chunk.toString() });
        done();
      },
    }),
    { isTTY: request.tty === true, columns: request.columns ?? 80, rows: 24 },
  ) as unknown as NodeJS.WriteStream;
  const io = { stderr, signal, env: request.env };
  // a sub-agent's job registers with its parent run at once (pending-child.ts), under its client's pid
  const pendingMarker = command === 'job' ? writePendingMarker(request.argv, request.env, request.pid) : undefined;
  let exit = 0;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded with the first request, as the hot path does */
    if (command === 'task') {
      const { runTaskCommand } = require('../commands/engine/task-run') as typeof import('../commands/engine/task-run');
      await runTaskCommand(parsed.options as TaskFlags, { runner: root.runner(), indexFor: root.indexFor }, io);
    } else {
      const { runJobCommand } = require('../commands/engine/job-run') as typeof import('../commands/engine/job-run');
      await runJobCommand(parsed.options as JobFlags, { runner: root.runner(), feed: root.feed, indexFor: root.indexFor, writers: root.writers }, { ...io, pendingMarker });
    }
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch (err) {
    const report = errorReport(err, parsed.options.json === true);
    send({ err: report.line });
    exit = report.exitCode;
  } finally {
    if (pendingMarker) clearPendingChild(pendingMarker);
  }
  send({ exit });
}
