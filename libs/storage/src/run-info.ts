import type { UsageTotals } from '@app/contracts';
import { basename, dirname } from 'node:path';
import { writeFileAtomic, writeFileAtomicAsync } from './atomic-write';
import { withFileLock } from './file-lock';
import { parseYaml } from './lazy-yaml';
import type { OwnerFence } from './owner-epoch';
import { readRecordText } from './safe-read';
import { parseRunCriteria, RunCriteria, serializeRunCriteria } from './run-criteria';
import { ioError, StorageError } from './storage.errors';
import { rfc3339Nano, yamlString } from './yaml-scalar';
import { RUNS_DIR_NAME } from './layout-names';

/** `corrupt`: the run's run-info.yaml cannot be parsed (a reader's view only, never written; see corrupt_reason). */
export type RunStatus = 'running' | 'completed' | 'failed' | 'unknown' | 'corrupt';

/** run-info.yaml (cli-storage.md §3.4). Optional string fields are omitted from the file when empty. */
export interface RunInfo {
  version: number;
  run_id: string;
  parent_run_id?: string;
  previous_run_id?: string;
  project_id: string;
  task_id: string;
  agent: string;
  /** Added field (issue #12): the configured agent name (config `agents:` key); upstream ignores it. */
  agent_name?: string;
  process_ownership?: string;
  pid: number;
  pgid: number;
  start_time: Date;
  end_time: Date;
  exit_code: number;
  status: RunStatus;
  cwd?: string;
  /** Added fields (issue #16): the task's git worktree, its branch and the commit it started from. */
  worktree?: string;
  branch?: string;
  base_commit?: string;
  prompt_path?: string;
  output_path?: string;
  stdout_path?: string;
  stderr_path?: string;
  commandline?: string;
  error_summary?: string;
  agent_version: string;
  /** Added fields (issue #18): the agent CLI's own session id, a rate-limit reset, token usage. */
  session_id?: string;
  resume_at?: Date;
  usage?: UsageTotals;
  /**
   * Added field: the runner's own record, written before its agent exists (pid/pgid are the
   * runner's, whose group may be a server's or a shell's). Stop never signals it; it leaves
   * STOPPED-BY and the runner does not start the agent. Upstream ignores the key.
   */
  starting?: boolean;
  /**
   * Added field: a REST run, executed inside its runner (pid/pgid are the runner's, only while
   * running). Stop never signals it either; the runner ends the request on STOPPED-BY.
   */
  in_process?: boolean;
  /**
   * Added field (issue #33): why a running run waits before its agent starts (the fan-out
   * governor's children per run, memory admission, run slots). Kept only while running; readers
   * show the run as `queued` with this reason. Upstream ignores the key.
   */
  queued_reason?: string;
  /**
   * Added field (issue #31): the owner epoch of the loop that last wrote the record (fencing,
   * owner-epoch.ts). Stamped by the fenced writers; upstream ignores the key.
   */
  owner_epoch?: number;
  /** Added field (issue #33): the completion criteria checked when this run's agent wrote DONE. */
  criteria?: RunCriteria;
  /** Reader's view only: why the record (status `corrupt`) could not be parsed. Never written. */
  corrupt_reason?: string;
}


const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens'] as const;

/** Go's zero time.Time, written while a run has not ended. */
export const ZERO_TIME: Date = new Date('0001-01-01T00:00:00Z');

export const RUN_INFO_LOCK_TIMEOUT_MS = 5000;
export const RUN_INFO_LOCK_POLL_MS = 10;

export function isZeroTime(d: Date | undefined): boolean {
  return !d || d.getTime() === ZERO_TIME.getTime() || Number.isNaN(d.getTime());
}

type Field = [key: keyof RunInfo, kind: 'int' | 'str' | 'time', emit: 'always' | 'nonEmpty'];

/** Field order and omitempty flags of upstream's struct: the file's byte layout depends on both. */
const FIELDS: Field[] = [
  ['version', 'int', 'always'],
  ['run_id', 'str', 'always'],
  ['parent_run_id', 'str', 'nonEmpty'],
  ['previous_run_id', 'str', 'nonEmpty'],
  ['project_id', 'str', 'always'],
  ['task_id', 'str', 'always'],
  ['agent', 'str', 'always'],
  ['agent_name', 'str', 'nonEmpty'],
  ['process_ownership', 'str', 'nonEmpty'],
  ['pid', 'int', 'always'],
  ['pgid', 'int', 'always'],
  ['start_time', 'time', 'always'],
  ['end_time', 'time', 'always'],
  ['exit_code', 'int', 'always'],
  ['status', 'str', 'always'],
  ['cwd', 'str', 'nonEmpty'],
  ['worktree', 'str', 'nonEmpty'],
  ['branch', 'str', 'nonEmpty'],
  ['base_commit', 'str', 'nonEmpty'],
  ['prompt_path', 'str', 'nonEmpty'],
  ['output_path', 'str', 'nonEmpty'],
  ['stdout_path', 'str', 'nonEmpty'],
  ['stderr_path', 'str', 'nonEmpty'],
  ['commandline', 'str', 'nonEmpty'],
  ['error_summary', 'str', 'nonEmpty'],
  ['agent_version', 'str', 'always'],
];

/** yaml.v3 byte layout: 4-space indent, RFC3339Nano UTC times, `""` for empty strings. */
export function serializeRunInfo(info: RunInfo): string {
  let out = '';
  for (const [key, kind, emit] of FIELDS) {
    const value = info[key];
    if (kind === 'int') {
      out += `${key}: ${Math.trunc(Number(value ?? 0)) || 0}\n`;
    } else if (kind === 'time') {
      const d = value instanceof Date && !Number.isNaN(value.getTime()) ? value : ZERO_TIME;
      out += `${key}: ${rfc3339Nano(d)}\n`;
    } else {
      const s = value === undefined || value === null ? '' : String(value);
      if (emit === 'nonEmpty' && s === '') continue;
      out += `${key}: ${yamlString(s)}\n`;
    }
  }
  return out + serializeAddedFields(info);
}

function serializeAddedFields(info: RunInfo): string {
  let out = '';
  if (info.session_id) out += `session_id: ${yamlString(info.session_id)}\n`;
  if (info.resume_at && !isZeroTime(info.resume_at)) out += `resume_at: ${rfc3339Nano(info.resume_at)}\n`;
  if (info.usage) {
    out += 'usage:\n';
    for (const k of USAGE_KEYS) out += `    ${k}: ${Math.trunc(Number(info.usage[k]) || 0)}\n`;
    if (typeof info.usage.cost_usd === 'number' && Number.isFinite(info.usage.cost_usd)) out += `    cost_usd: ${info.usage.cost_usd}\n`;
    if (info.usage.partial) out += '    partial: true\n';
  }
  if (info.starting && info.status === 'running') out += 'starting: true\n';
  if (info.in_process && info.status === 'running') out += 'in_process: true\n';
  if (info.queued_reason && info.status === 'running') out += `queued_reason: ${yamlString(info.queued_reason)}\n`;
  if (info.owner_epoch !== undefined && info.owner_epoch > 0) out += `owner_epoch: ${Math.trunc(info.owner_epoch)}\n`;
  if (info.criteria) out += serializeRunCriteria(info.criteria);
  return out;
}

function parseUsage(raw: unknown): UsageTotals | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const usage = {} as UsageTotals;
  for (const k of USAGE_KEYS) usage[k] = Math.max(0, toInt(r[k], 0));
  const cost = typeof r.cost_usd === 'number' ? r.cost_usd : typeof r.cost_usd === 'string' ? Number(r.cost_usd) : NaN;
  if (Number.isFinite(cost) && cost >= 0) usage.cost_usd = cost;
  if (r.partial === true) usage.partial = true;
  return usage;
}

/** Parses an RFC 3339 timestamp keeping millisecond precision (Go writes up to nanoseconds). */
export function parseTime(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value !== 'string' || value.trim() === '') return ZERO_TIME;
  const trimmed = value.trim().replace(/(\.\d{3})\d+/, '$1');
  const d = new Date(trimmed);
  return Number.isNaN(d.getTime()) ? ZERO_TIME : d;
}

function toInt(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  return fallback;
}

function toStr(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : String(value);
}

const WRITTEN_STATUSES: ReadonlySet<string> = new Set(['running', 'completed', 'failed', 'unknown']);

function normaliseStatus(value: string): RunStatus {
  return value === '' ? 'unknown' : (value as RunStatus);
}

const INT_FIELDS = ['version', 'pid', 'pgid', 'exit_code'] as const;

/** Fields of the wrong type (a list where a number belongs, a status nobody writes): the record is corrupt. */
function typeProblem(raw: Record<string, unknown>): string | undefined {
  for (const key of INT_FIELDS) {
    const v = raw[key];
    if (v !== undefined && v !== null && toInt(v, NaN) !== toInt(v, NaN)) return `${key} must be an integer, got ${JSON.stringify(v)}`;
  }
  for (const [key, v] of Object.entries(raw)) {
    if (key !== 'usage' && key !== 'criteria' && v !== null && typeof v === 'object' && !(v instanceof Date)) return `${key} must be a scalar, got a ${Array.isArray(v) ? 'list' : 'mapping'}`;
  }
  if (raw.usage !== undefined && raw.usage !== null && (typeof raw.usage !== 'object' || Array.isArray(raw.usage))) return 'usage must be a mapping';
  const status = toStr(raw.status);
  if (status !== '' && !WRITTEN_STATUSES.has(status)) return `status ${JSON.stringify(status)} is not one of running, completed, failed, unknown`;
  return undefined;
}

/** `…/<project>/<task>/runs/<run>/run-info.yaml` → ids, when the path has that shape. */
export function idsFromRunInfoPath(path: string): { project_id: string; task_id: string; run_id: string } | undefined {
  const runDir = dirname(path);
  const runsDir = dirname(runDir);
  if (basename(runsDir) !== RUNS_DIR_NAME) return undefined;
  const taskDir = dirname(runsDir);
  return { run_id: basename(runDir), task_id: basename(taskDir), project_id: basename(dirname(taskDir)) };
}

const SIMPLE_LINE = /^([a-z_]+): ?(.*)$/;
const USAGE_LINE = /^ {4}([a-z_]+): (\d{1,15}(?:\.\d+)?(?:e-?\d+)?|true)$/;
const PLAIN_SAFE = /^(?:""|[^\s"'|>&*!%@`{}[\]#,?:-][^#]*?)$/;

/**
 * Fast path for the flat files we and upstream write (one `key: plain-scalar` per line): a few
 * times faster than a full YAML parse, which matters when listing thousands of runs cold.
 * Anything unusual (quotes, block scalars, comments, nesting) returns undefined → full parser.
 */
function parseSimple(text: string): Record<string, unknown> | undefined {
  if (text.includes('\r')) return undefined;
  const out: Record<string, unknown> = {};
  let usage: Record<string, unknown> | undefined;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    // the one nested block we write: `usage:` with 4-space-indented numbers
    if (usage && line.startsWith('    ')) {
      const n = USAGE_LINE.exec(line);
      if (!n) return undefined;
      usage[n[1]] = n[2] === 'true' ? true : Number(n[2]);
      continue;
    }
    usage = undefined;
    if (line === 'usage:') {
      out.usage = usage = {};
      continue;
    }
    const m = SIMPLE_LINE.exec(line);
    if (!m) return undefined;
    const value = m[2];
    if (value === '""' || value === '') {
      out[m[1]] = '';
      continue;
    }
    if (/^-?\d{1,15}$/.test(value)) {
      out[m[1]] = Number(value);
      continue;
    }
    if (!PLAIN_SAFE.test(value) || value.endsWith(' ') || value.includes(': ') || value.endsWith(':')) return undefined;
    out[m[1]] = value === 'null' || value === '~' || value === 'Null' || value === 'NULL' ? '' : value;
  }
  return out;
}

/** Parses run-info text; unknown keys are ignored, missing ids are filled from `path`. */
export function parseRunInfo(text: string, path?: string): RunInfo {
  let doc: unknown = parseSimple(text);
  if (doc === undefined) {
    try {
      // Core schema: timestamps stay strings (parsed below, keeping Go's year-1 zero time intact).
      doc = parseYaml(text, { schema: 'core', prettyErrors: false, uniqueKeys: false });
    } catch (err) {
      throw new StorageError('CORRUPT', `unmarshal run-info${path ? ` ${path}` : ''}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new StorageError('CORRUPT', `unmarshal run-info${path ? ` ${path}` : ''}: not a mapping (${Array.isArray(doc) ? 'a list' : 'a scalar'})`);
  }
  const raw = doc as Record<string, unknown>;
  const problem = typeProblem(raw);
  if (problem) throw new StorageError('CORRUPT', `unmarshal run-info${path ? ` ${path}` : ''}: ${problem}`);
  const info: RunInfo = {
    version: toInt(raw.version, 0),
    run_id: toStr(raw.run_id),
    project_id: toStr(raw.project_id),
    task_id: toStr(raw.task_id),
    agent: toStr(raw.agent),
    pid: toInt(raw.pid, 0),
    pgid: toInt(raw.pgid, 0),
    start_time: parseTime(raw.start_time),
    end_time: parseTime(raw.end_time),
    exit_code: toInt(raw.exit_code, 0),
    status: normaliseStatus(toStr(raw.status)),
    agent_version: toStr(raw.agent_version),
  };
  for (const key of ['parent_run_id', 'previous_run_id', 'agent_name', 'process_ownership', 'cwd', 'worktree', 'branch', 'base_commit', 'prompt_path', 'output_path',
    'stdout_path', 'stderr_path', 'commandline', 'error_summary'] as const) {
    const s = toStr(raw[key]);
    if (s !== '') info[key] = s;
  }
  const session = toStr(raw.session_id);
  if (session !== '') info.session_id = session;
  const resumeAt = parseTime(raw.resume_at);
  if (!isZeroTime(resumeAt)) info.resume_at = resumeAt;
  const usage = parseUsage(raw.usage);
  if (usage) info.usage = usage;
  if (raw.starting === true || raw.starting === 'true') info.starting = true;
  if (raw.in_process === true || raw.in_process === 'true') info.in_process = true;
  const queued = toStr(raw.queued_reason);
  if (queued !== '' && info.status === 'running') info.queued_reason = queued;
  const epoch = toInt(raw.owner_epoch, 0);
  if (epoch > 0) info.owner_epoch = epoch;
  const criteria = parseRunCriteria(raw.criteria);
  if (criteria) info.criteria = criteria;
  const fromPath = path ? idsFromRunInfoPath(path) : undefined;
  if (fromPath) {
    if (!info.run_id) info.run_id = fromPath.run_id;
    if (!info.task_id) info.task_id = fromPath.task_id;
    if (!info.project_id) info.project_id = fromPath.project_id;
  }
  return info;
}

export function readRunInfo(path: string): RunInfo {
  let text: string;
  try {
    text = readRecordText(path);
  } catch (err) {
    if (err instanceof StorageError) throw err;
    throw ioError(`read run-info ${path}`, err);
  }
  return parseRunInfo(text, path);
}

/**
 * Atomic (temp + fsync + rename): concurrent readers see the old or the new file, never a mix.
 * With `fence` (the task owner's proof, owner-epoch.ts) the record is stamped with its epoch and
 * written only while that epoch is the task's current one (else StaleEpochError, nothing written).
 */
export function writeRunInfo(path: string, info: RunInfo, opts: { fsync?: boolean; fence?: OwnerFence } = {}): void {
  refuseCorruptView(path, info);
  const { fence } = opts;
  if (!fence) return writeFileAtomic(path, serializeRunInfo(info), RUN_INFO_TEMP_PATTERN, opts);
  fence.guard(() => writeFileAtomic(path, serializeRunInfo({ ...info, owner_epoch: fence.epoch }), RUN_INFO_TEMP_PATTERN, opts));
}

/** writeRunInfo without blocking the event loop during the fsync. */
export async function writeRunInfoAsync(path: string, info: RunInfo, opts: { fence?: OwnerFence } = {}): Promise<void> {
  refuseCorruptView(path, info);
  const { fence } = opts;
  if (!fence) return writeFileAtomicAsync(path, serializeRunInfo(info), RUN_INFO_TEMP_PATTERN);
  return fence.guardAsync(() => writeFileAtomicAsync(path, serializeRunInfo({ ...info, owner_epoch: fence.epoch }), RUN_INFO_TEMP_PATTERN));
}

const RUN_INFO_TEMP_PATTERN = 'run-info.*.yaml.tmp';

/**
 * Locked read-modify-write under `<path>.lock` (flock, polled every 10 ms, 5 s), interoperable
 * with upstream's UpdateRunInfo. The lock file is removed afterwards, as upstream does.
 */
export async function updateRunInfo(
  path: string,
  mutate: (info: RunInfo) => RunInfo | void,
  opts: { timeoutMs?: number; fence?: OwnerFence } = {},
): Promise<RunInfo> {
  const lockPath = `${path}.lock`;
  try {
    return await withFileLock(
      lockPath,
      { timeoutMs: opts.timeoutMs ?? RUN_INFO_LOCK_TIMEOUT_MS, pollMs: RUN_INFO_LOCK_POLL_MS, removeAfter: true },
      async () => {
        const current = readRunInfo(path);
        const next = mutate(current) ?? current;
        await writeRunInfoAsync(path, next, { fence: opts.fence });
        return opts.fence ? { ...next, owner_epoch: opts.fence.epoch } : next;
      },
    );
  } catch (err) {
    if (err instanceof StorageError && err.code === 'LOCK_TIMEOUT') {
      throw new StorageError('LOCK_TIMEOUT', `acquire run-info lock: ${err.message}`);
    }
    throw err;
  }
}

/** A `corrupt` record is a reader's view of a file that cannot be parsed: writing it would replace the evidence. */
function refuseCorruptView(path: string, info: RunInfo): void {
  if (info.status === 'corrupt' || info.corrupt_reason !== undefined) throw new StorageError('CORRUPT', `refusing to write the corrupt view of ${path} over the file`);
}
