// Live progress of `run-agent task` on stderr: event lines as the loop runs and, on a terminal, a
// status line redrawn in place (log-update) with colour (picocolors). NO_COLOR / TERM=dumb turn
// the colour off; a non-terminal stream gets plain timestamped lines and no status line.
import { join } from 'node:path';
import { createColors } from 'picocolors';
import { BusCursor } from '@app/messagebus';
import { pathExists, readRunInfo, RUN_INFO_FILE, DONE_FILE } from '@app/storage';
import { describeMessage, EventTone, formatElapsed, LoopState, TaskEvent } from './task-events';

export interface ProgressOptions {
  busPath: string;
  taskDir: string;
  taskId: string;
  restartDelayMs: number;
  stream: NodeJS.WriteStream;
  env?: NodeJS.ProcessEnv;
  /** How often the bus is read and the status line redrawn (default 100 ms on a TTY, 250 ms otherwise). */
  intervalMs?: number;
}

export interface TaskProgress {
  /** Reads what is left on the bus, prints it, and removes the status line. */
  stop(): void;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return !!stream.isTTY && env.TERM !== 'dumb';
}

export function startTaskProgress(opts: ProgressOptions): TaskProgress {
  const env = opts.env ?? process.env;
  const live = !!opts.stream.isTTY && env.TERM !== 'dumb';
  const c = createColors(colourEnabled(opts.stream, env));
  const paint: Record<EventTone, (s: string) => string> = {
    start: c.cyan,
    ok: c.green,
    warn: c.yellow,
    error: c.red,
    info: (s) => s,
    agent: c.dim,
  };
  const mark: Record<EventTone, string> = { start: '▶', ok: '✓', warn: '!', error: '✗', info: '·', agent: ' ' };
  const state: LoopState = { attempt: 1, phase: 'starting' };
  const started = Date.now();
  const ctx = {
    restartDelayMs: opts.restartDelayMs,
    isDone: () => pathExists(join(opts.taskDir, DONE_FILE)),
    agentOf: (runDir: string) => {
      try {
        return readRunInfo(join(runDir, RUN_INFO_FILE)).agent || undefined;
      } catch {
        return undefined;
      }
    },
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const status = live ? (require('log-update') as typeof import('log-update')).create(opts.stream, { showCursor: true }) : undefined;
  let cursor: BusCursor | undefined;
  let frame = 0;

  const print = (ev: TaskEvent) => {
    const text = live ? `${paint[ev.tone](mark[ev.tone])} ${paint[ev.tone](ev.text)}` : `[${new Date().toISOString().slice(11, 19)}] ${ev.text}`;
    status?.clear();
    opts.stream.write(`${text}\n`);
  };
  const drawStatus = () => {
    if (!status) return;
    frame = (frame + 1) % SPINNER.length;
    const parts = [c.cyan(SPINNER[frame]), c.bold(opts.taskId), `attempt ${state.attempt}`, state.phase, c.dim(formatElapsed(Date.now() - started))];
    status(parts.join(c.dim(' · ')));
  };
  const poll = () => {
    try {
      cursor ??= new BusCursor(opts.busPath, { fromEnd: pathExists(opts.busPath) });
      for (const msg of cursor.readNew()) {
        const ev = describeMessage(msg, state, ctx);
        if (ev) print(ev);
      }
    } catch {
      // progress is best effort: the task itself reports its own errors
    }
    drawStatus();
  };

  poll();
  const timer = setInterval(poll, opts.intervalMs ?? (live ? 100 : 250));
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      poll();
      status?.clear();
      status?.done();
      cursor?.close();
    },
  };
}
