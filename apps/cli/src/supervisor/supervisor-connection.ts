/**
 * One client of the task supervisor. The protocol, newline-delimited JSON over the Unix socket
 * (bin/task-client.js is the other end):
 * - client → `{"argv": ["task", …], "cwd": "…", "tty": bool, "columns": n}`, later `{"signal": "SIGINT"}`;
 * - supervisor → `{"pid": n}`, then `{"err": "text"}` for each write to the command's stderr, then
 *   `{"exit": code}`; or `{"fallback": "why"}` when the client must run the command itself
 *   (`--help`, a usage error for commander to word, another working directory).
 * A client that goes away (closed socket) or sends a signal stops its loop and agent, as a SIGINT'd
 * or killed in-process `task` does.
 */
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { errorReport } from '../common/cli-errors';
import type { TaskFlags } from '../commands/engine/task-flags';
import type { PlainSeams } from '../fast/plain-root';
import { parseHotCommand } from '../fast/run-hot';

/** A request line longer than this (an argv of megabytes) ends the connection. */
const MAX_LINE_CHARS = 1 << 20;

interface TaskRequest {
  argv: string[];
  cwd: string;
  tty?: boolean;
  columns?: number;
}

function asRequest(value: unknown): TaskRequest | undefined {
  const r = value as Partial<TaskRequest> | null;
  if (!r || typeof r !== 'object' || !Array.isArray(r.argv) || !r.argv.every((a) => typeof a === 'string') || typeof r.cwd !== 'string') return undefined;
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
  return new Promise<void>((resolve) => {
    conn.setEncoding('utf8');
    conn.on('error', () => undefined);
    conn.on('close', () => {
      abort.abort('its client went away');
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
          if (typeof signal === 'string') abort.abort(`interrupted by ${signal}`);
          continue;
        }
        const request = asRequest(msg);
        if (!request) return void conn.destroy();
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
  const parsed = request.argv[0] === 'task' ? parseHotCommand(request.argv) : undefined;
  if (!parsed) return send({ fallback: 'not a task this supervisor runs (help, a usage error or a subcommand)' });
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
  let exit = 0;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the first task, as the hot path does
    const { runTaskCommand } = require('../commands/engine/task-run') as typeof import('../commands/engine/task-run');
    await runTaskCommand(parsed.options as TaskFlags, { runner: root.runner(), indexFor: root.indexFor }, { stderr, signal });
  } catch (err) {
    const report = errorReport(err, parsed.options.json === true);
    send({ err: report.line });
    exit = report.exitCode;
  }
  send({ exit });
}
