// How `run-agent watch` shows its polls (#13 item 6). On a terminal one block (phase counts, a
// line per task, the waiting line) is redrawn in place (log-update), in colour unless NO_COLOR,
// with each transition printed once above it. Elsewhere (a pipe, a file, TERM=dumb) the first
// poll prints the block and later polls print only what changed, so a log reads as a history.
import { createColors } from 'picocolors';
import { formatGoDuration, type WatchTaskStatus } from '@app/runner';

export type { WatchTaskStatus };
import { colourEnabled } from './task-progress';

export type WatchPhase = 'active' | 'blocked' | 'completed' | 'failed' | 'stopped' | 'pending';

export function watchPhase(status: string): WatchPhase {
  switch (status) {
    case 'running':
    case 'restarting': // an attempt ended, the Ralph loop starts the next one
    case 'finishing': // DONE written, the loop waits for child runs
      return 'active';
    case 'blocked':
      return 'blocked';
    case 'completed':
    case 'done':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'stopped':
    case 'cancelled':
      return 'stopped';
    default:
      return 'pending';
  }
}

type Paint = (s: string) => string;
const plain: Paint = (s) => s;

interface RenderOptions {
  /** Only these tasks get a line (all when absent). */
  only?: ReadonlySet<string>;
  /** Transition lines under their task (the plain view); the live view prints them above the block. */
  transitions?: boolean;
  paint?: Partial<Record<WatchPhase, Paint>>;
}

function phaseCounts(statuses: WatchTaskStatus[]): Record<WatchPhase, number> {
  const counts = { active: 0, blocked: 0, completed: 0, failed: 0, stopped: 0, pending: 0 };
  statuses.forEach((s) => counts[watchPhase(s.status)]++);
  return counts;
}

function taskLine(s: WatchTaskStatus, paint: Paint): string {
  const phase = watchPhase(s.status);
  const label = s.done ? 'duration' : 'elapsed';
  // Go duration text of the real run time (sub-second runs too); "-" when no run time is known.
  const time = s.elapsed < 0 ? '-' : formatGoDuration(Math.round(s.elapsed * 1000));
  return `  ${s.task_id.padEnd(45)} [${paint(s.status.padEnd(9))}] ${paint(phase.padEnd(9))} ${label}: ${time}\n`;
}

/** One poll's block; records each task's phase in `previous` (a changed phase is a transition). */
export function renderWatchPoll(statuses: WatchTaskStatus[], previous: Map<string, string>, allDone: boolean, remainingMs: number, opts: RenderOptions = { transitions: true }): string {
  const counts = phaseCounts(statuses);
  let out = `  phase counts: active=${counts.active} blocked=${counts.blocked} completed=${counts.completed} failed=${counts.failed} stopped=${counts.stopped} pending=${counts.pending}\n`;
  for (const s of statuses) {
    const phase = watchPhase(s.status);
    if (!opts.only || opts.only.has(s.task_id)) {
      out += taskLine(s, opts.paint?.[phase] ?? plain);
      // A transition is a change seen by this watch; the first poll only shows the state.
      const before = previous.get(s.task_id);
      if (opts.transitions && before !== undefined && before !== phase) out += `    transition: ${before} -> ${phase}\n`;
    }
    previous.set(s.task_id, phase);
  }
  if (allDone) return `${out}All tasks complete.\n`;
  const remaining = formatGoDuration(Math.max(0, Math.round(remainingMs / 1000) * 1000));
  return `${out}Waiting for ${counts.active} active and ${counts.blocked} blocked task(s)... (timeout in ${remaining})\n`;
}

export interface WatchView {
  /** How long the watch may wait for a change before polling again (the live view ticks its clocks). */
  readonly tickMs: number;
  update(statuses: WatchTaskStatus[], allDone: boolean, remainingMs: number): void;
  /** Leaves the last block on screen (also after a timeout or an error). */
  finish(): void;
}

/** Prints the first poll whole, then only polls where a task's status changed, and only those tasks. */
function changesView(stream: NodeJS.WritableStream): WatchView {
  const phases = new Map<string, string>();
  const shown = new Map<string, string>();
  return {
    tickMs: 2000,
    update(statuses, allDone, remainingMs) {
      const changed = new Set(statuses.filter((s) => shown.get(s.task_id) !== s.status).map((s) => s.task_id));
      if (shown.size > 0 && changed.size === 0) return;
      statuses.forEach((s) => shown.set(s.task_id, s.status));
      stream.write(renderWatchPoll(statuses, phases, allDone, remainingMs, { only: changed, transitions: true }));
    },
    finish() {},
  };
}

/** Redraws one block in place; transitions go above it as lines that stay. */
function liveView(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): WatchView {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only a terminal needs it
  const block = (require('log-update') as typeof import('log-update')).create(stream, { showCursor: true });
  const c = createColors(colourEnabled(stream, env));
  const paint: Record<WatchPhase, Paint> = { active: c.cyan, blocked: c.magenta, completed: c.green, failed: c.red, stopped: c.yellow, pending: c.dim };
  const phases = new Map<string, string>();
  let finished = false;
  return {
    tickMs: 1000,
    update(statuses, allDone, remainingMs) {
      const moves = statuses.flatMap((s) => {
        const before = phases.get(s.task_id);
        const now = watchPhase(s.status);
        return before !== undefined && before !== now ? [`  ${s.task_id}: ${before} -> ${paint[now](now)}\n`] : [];
      });
      if (moves.length) {
        block.clear();
        stream.write(moves.join(''));
      }
      block(renderWatchPoll(statuses, phases, allDone, remainingMs, { transitions: false, paint }).replace(/\n$/, ''));
    },
    finish() {
      if (finished) return;
      finished = true;
      block.done();
    },
  };
}

export function createWatchView(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): WatchView {
  return stream.isTTY && env.TERM !== 'dumb' ? liveView(stream, env) : changesView(stream);
}
