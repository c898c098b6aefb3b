import { statSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { readMessages, type BusMessage } from '@app/messagebus';
import { RUN_OUTPUT_FILE, RUN_STDERR_FILE, RUN_STDOUT_FILE, TASK_BUS_FILE, taskRunsDir } from '@app/storage';
import { formatGoDuration } from '../go-duration';

/** RFC 3339 in UTC with whole seconds, like Go's time.RFC3339 for a UTC time. */
export function rfc3339Seconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
const rfc3339 = rfc3339Seconds;

/** UTC time as `YYYY-MM-DD HH:MM:SS` (how run start times are shown). */
export function utcSecond(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export const DEFAULT_DRIFT_AFTER_MS = 20 * 60_000;
const PREVIEW_LIMIT = 96;
const MEANINGFUL_TYPES = new Set(['FACT', 'DECISION', 'ERROR', 'REVIEW']);

export interface ActivityBusMessage {
  timestamp: string;
  type: string;
  body_preview: string;
}

/** JSON shape of `status --activity` / `list --activity` (cli-storage.md §7.3). */
export interface ActivitySignals {
  latest_bus_message: ActivityBusMessage | null;
  latest_output_activity_at: string | null;
  last_meaningful_signal_at: string | null;
  meaningful_signal_age_seconds: number | null;
  analysis_drift_risk: boolean;
  drift_threshold_seconds: number;
  drift_reason: string;
}

export interface LatestRunFacts {
  runId?: string;
  status: string;
  startTime?: Date;
  outputPath?: string;
  stdoutPath?: string;
  stderrPath?: string;
}

/** Whitespace collapsed, at most `limit` characters, `...` when cut. */
export function compactPreview(body: string, limit = PREVIEW_LIMIT): string {
  const compact = body.trim().split(/\s+/).filter(Boolean).join(' ');
  const chars = [...compact];
  if (chars.length <= limit) return compact;
  return `${chars.slice(0, limit - 3).join('')}...`;
}

function roundedDuration(ms: number): string {
  return formatGoDuration(Math.round(ms / 1000) * 1000);
}

function newestOutputMtime(taskDir: string, run: LatestRunFacts): Date | undefined {
  const runDir = run.runId ? join(taskRunsDir(taskDir), run.runId) : undefined;
  const candidates = [run.outputPath, run.stdoutPath, run.stderrPath]
    .filter((p): p is string => !!p?.trim())
    .map((p) => (isAbsolute(p) || !runDir ? p : join(runDir, p)));
  if (runDir) candidates.push(...[RUN_OUTPUT_FILE, RUN_STDOUT_FILE, RUN_STDERR_FILE].map((f) => join(runDir, f)));
  let newest: Date | undefined;
  for (const path of new Set(candidates.map((p) => normalize(p)))) {
    try {
      const st = statSync(path);
      if (!st.isDirectory() && (!newest || st.mtime > newest)) newest = st.mtime;
    } catch {
      // missing file: no signal
    }
  }
  return newest;
}

export function collectActivity(taskDir: string, run: LatestRunFacts, driftAfterMs: number, now = new Date()): ActivitySignals {
  const signals: ActivitySignals = {
    latest_bus_message: null,
    latest_output_activity_at: null,
    last_meaningful_signal_at: null,
    meaningful_signal_age_seconds: null,
    analysis_drift_risk: false,
    drift_threshold_seconds: Math.floor(driftAfterMs / 1000),
    drift_reason: 'task is not running',
  };

  let busError: string | undefined;
  let lastMeaningful: Date | undefined;
  try {
    const messages: BusMessage[] = readMessages(join(taskDir, TASK_BUS_FILE));
    const latest = messages[messages.length - 1];
    if (latest) {
      signals.latest_bus_message = { timestamp: rfc3339(latest.ts), type: latest.type.trim(), body_preview: compactPreview(latest.body) };
    }
    for (let i = messages.length - 1; i >= 0; i--) {
      if (MEANINGFUL_TYPES.has(messages[i].type.trim().toUpperCase())) {
        lastMeaningful = messages[i].ts;
        break;
      }
    }
  } catch (err) {
    busError = err instanceof Error ? err.message : String(err);
  }
  if (lastMeaningful) {
    signals.last_meaningful_signal_at = rfc3339(lastMeaningful);
    signals.meaningful_signal_age_seconds = Math.floor(Math.max(0, now.getTime() - lastMeaningful.getTime()) / 1000);
  }
  const outputAt = newestOutputMtime(taskDir, run);
  if (outputAt) signals.latest_output_activity_at = rfc3339(outputAt);

  if (run.status.trim().toLowerCase() !== 'running') {
    if (busError) signals.drift_reason = `task is not running (message bus read failed: ${busError})`;
    return signals;
  }

  if (lastMeaningful) {
    const age = Math.max(0, now.getTime() - lastMeaningful.getTime());
    signals.analysis_drift_risk = age > driftAfterMs;
    signals.drift_reason = signals.analysis_drift_risk
      ? `no meaningful bus signal for ${roundedDuration(age)}`
      : `last meaningful bus signal ${roundedDuration(age)} ago`;
  } else if (run.startTime && run.startTime.getTime() > 0) {
    const sinceStart = Math.max(0, now.getTime() - run.startTime.getTime());
    signals.analysis_drift_risk = sinceStart > driftAfterMs;
    signals.drift_reason = signals.analysis_drift_risk
      ? `running for ${roundedDuration(sinceStart)} without meaningful bus signal`
      : `no meaningful bus signal yet (running for ${roundedDuration(sinceStart)})`;
  } else {
    signals.drift_reason = 'running with no meaningful bus signal';
  }
  if (busError) signals.drift_reason = `${signals.drift_reason} (message bus read failed: ${busError})`;
  return signals;
}

