// How `run-agent task` narrates its Ralph loop: the runner's task-bus messages turned into one
// event line each, plus the phase shown in the live status line (issue #13 item 6).
import type { BusMessage } from '@app/messagebus';

export type EventTone = 'start' | 'ok' | 'warn' | 'error' | 'info' | 'agent';

export interface TaskEvent {
  tone: EventTone;
  text: string;
}

/** What the loop is doing now (status line). */
export interface LoopState {
  attempt: number;
  phase: string;
  runId?: string;
}

/** Agent-authored message types worth a line while the task runs. */
const AGENT_TYPES = new Set(['PROGRESS', 'FACT', 'DECISION', 'QUESTION', 'ERROR', 'REVIEW', 'USER']);

const firstLine = (body: string): string => body.split('\n', 1)[0].trim();
const field = (body: string, name: string): string | undefined => new RegExp(`^${name}: (.+)$`, 'm').exec(body)?.[1].trim();

/** Extra facts the narrator looks up on disk (the agent of a run, whether DONE exists). */
export interface EventContext {
  agentOf(runDir: string): string | undefined;
  isDone(): boolean;
  restartDelayMs: number;
}

/** Updates `state` and returns the line to print for `msg` (undefined: nothing to print). */
export function describeMessage(msg: BusMessage, state: LoopState, ctx: EventContext): TaskEvent | undefined {
  const body = msg.body ?? '';
  const line = firstLine(body);
  switch (msg.type) {
    case 'RUN_START': {
      const runDir = field(body, 'run_dir');
      const agent = runDir ? ctx.agentOf(runDir) : undefined;
      state.runId = msg.run_id;
      state.phase = 'running';
      return { tone: 'start', text: `attempt ${state.attempt}: run ${msg.run_id} started${agent ? ` with agent ${agent}` : ''}` };
    }
    case 'RUN_STOP':
    case 'RUN_CRASH': {
      const code = /code (-?\d+)/.exec(line)?.[1] ?? '?';
      const done = ctx.isDone();
      state.phase = done ? 'DONE written' : `restarting in ${formatDelay(ctx.restartDelayMs)}`;
      const tail = done ? '; DONE written' : `; no DONE yet, restarting in ${formatDelay(ctx.restartDelayMs)}`;
      return { tone: code === '0' ? 'ok' : 'warn', text: `attempt ${state.attempt}: run ${msg.run_id} exited with code ${code}${tail}` };
    }
    case 'INFO': {
      const restart = /^starting root agent \(restart #(\d+)\)/.exec(line);
      if (restart) {
        state.attempt = Number(restart[1]) + 1;
        state.phase = 'starting';
        return undefined;
      }
      if (/^waiting for \d+ children/.test(line)) {
        state.phase = 'waiting for child runs';
        return { tone: 'info', text: line.replace(/^waiting for (\d+) children to complete/, 'waiting for $1 child runs to finish') };
      }
      if (/^task completed/.test(line)) {
        state.phase = 'DONE';
        return { tone: 'ok', text: `DONE: ${line}` };
      }
      return { tone: 'info', text: line };
    }
    case 'WARN':
    case 'WARNING':
      return { tone: 'warn', text: line };
    default:
      if (msg.run_id === '' && msg.type === 'ERROR') return { tone: 'error', text: line };
      return AGENT_TYPES.has(msg.type) && line ? { tone: 'agent', text: `${msg.type}: ${line}` } : undefined;
  }
}

export function formatDelay(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
