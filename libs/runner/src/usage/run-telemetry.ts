import { existsSync, readFileSync, statSync } from 'node:fs';
import { AgentSpec, parseStreamTelemetry, rateLimitFromText, readFileLines, SESSION_ID_PATTERN, StreamTelemetry, withResumeArgs } from '@app/agents';
import { RunInfo } from '@app/storage';

const STDERR_SCAN_BYTES = 64 * 1024;

/** Usage, session id and rate limit of a finished run, from its stdout (and for a failed CLI run, its stderr). */
export function readRunTelemetry(agentType: string, info: RunInfo, failed: boolean): StreamTelemetry {
  let out: StreamTelemetry = {};
  try {
    if (info.stdout_path && existsSync(info.stdout_path)) out = parseStreamTelemetry(agentType, readFileLines(info.stdout_path));
  } catch {
    out = {};
  }
  if (failed && !out.rate_limited_until && (agentType === 'codex' || agentType === 'gemini') && info.stderr_path) {
    out.rate_limited_until = rateLimitFromText(tail(info.stderr_path));
  }
  if (out.session_id && !SESSION_ID_PATTERN.test(out.session_id)) delete out.session_id;
  return out;
}

function tail(path: string): string {
  try {
    const size = statSync(path).size;
    const text = readFileSync(path, 'utf8');
    return size > STDERR_SCAN_BYTES ? text.slice(-STDERR_SCAN_BYTES) : text;
  } catch {
    return '';
  }
}

/** The run-info fields for that telemetry (added fields: usage, session_id, resume_at). */
export function applyTelemetry(info: RunInfo, t: StreamTelemetry): RunInfo {
  if (t.usage) info.usage = t.usage;
  if (t.session_id) info.session_id = t.session_id;
  if (t.rate_limited_until && t.rate_limited_until.getTime() > Date.now()) info.resume_at = t.rate_limited_until;
  return info;
}

/** The agent spec of an attempt that continues `sessionId` (CLI agents only). */
export function withResumedSession(sessionId: string | undefined, spec: AgentSpec): AgentSpec {
  if (!sessionId || spec.kind !== 'cli' || !SESSION_ID_PATTERN.test(sessionId)) return spec;
  return { ...spec, args: withResumeArgs(spec.type, spec.args, sessionId) };
}
