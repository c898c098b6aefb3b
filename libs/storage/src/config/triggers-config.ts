import { Cron } from 'croner';
import { validateIdentifier, validateProjectId } from '../ids';
import type { RawReader } from './raw-config';

/** What a schedule or trigger starts: the fields of POST /api/v1/tasks it may set (docs/triggers.md). */
export interface TaskTemplate {
  project_id: string;
  /** For a trigger: a template (`{{payload.field}}`), rendered per request. */
  prompt: string;
  /** Agent name or type; '' = defaults.agent. */
  agent_type: string;
  project_root?: string;
  /** `worktree` or `none` (docs/worktrees.md). */
  isolation?: string;
  base?: string;
}

export const MISSED_RUN_POLICIES = ['skip', 'run_once', 'run_all'] as const;
export type MissedRunPolicy = (typeof MISSED_RUN_POLICIES)[number];
/** When the previous task still runs: skip this run, replace (stop) the previous task, or queue one run behind it. */
export const CONCURRENCY_POLICIES = ['skip', 'replace', 'queue'] as const;
export type ConcurrencyPolicy = (typeof CONCURRENCY_POLICIES)[number];

export interface ScheduleConfig {
  name: string;
  /** 5 fields, or 6 with seconds first (croner syntax). */
  cron: string;
  /** IANA time zone the cron expression is read in (default UTC). */
  timezone: string;
  missed: MissedRunPolicy;
  /** With `missed: run_all`: at most this many missed slots are run (default 10). */
  max_missed: number;
  concurrency: ConcurrencyPolicy;
  task: TaskTemplate;
}

export interface TriggerConfig {
  name: string;
  /** Lower-case hex sha256 of the bearer token; `run-agent trigger token` keeps one in the runs root instead. */
  token_sha256?: string;
  /** Requests per minute accepted (default 60). */
  rate_per_minute: number;
  /** Largest JSON payload, in bytes (default 65536). */
  max_payload_bytes: number;
  task: TaskTemplate;
}

export const SCHEDULE_DEFAULT_MAX_MISSED = 10;
export const TRIGGER_DEFAULT_RATE_PER_MINUTE = 60;
export const TRIGGER_DEFAULT_MAX_PAYLOAD_BYTES = 65536;

/** A schedule or trigger name: the shared identifier rule, then a single lower-case path segment. */
export function validateTriggerName(name: string, label = 'name'): string {
  const id = validateIdentifier(name, label);
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(id)) throw new Error(`${label} ${JSON.stringify(id)} must be lower-case letters, digits, '-' and '_', starting with a letter or digit`);
  return id;
}

function checkName(r: RawReader, path: string[], name: string): void {
  try {
    validateTriggerName(name);
  } catch (err) {
    r.fail(path, (err as Error).message);
  }
}

function oneOf<T extends string>(r: RawReader, path: (string | number)[], values: readonly T[], dflt: T): T {
  const v = r.str(path).trim();
  if (v === '') return dflt;
  if (!(values as readonly string[]).includes(v)) r.fail(path, `must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

function positiveInt(r: RawReader, path: (string | number)[], dflt: number): number {
  if (r.get(path) === undefined || r.get(path) === null) return dflt;
  const v = r.int(path);
  if (v <= 0) r.fail(path, `must be a positive integer, got ${v}`);
  return v;
}

export function buildTemplate(r: RawReader, base: string[], promptDefault?: string): TaskTemplate {
  const p = [...base, 'task'];
  if (r.get(p) === undefined || r.get(p) === null) r.fail(p, 'is required');
  r.map(p);
  const project = r.str([...p, 'project']).trim();
  if (project === '') r.fail([...p, 'project'], 'is required');
  try {
    validateProjectId(project);
  } catch (err) {
    r.fail([...p, 'project'], (err as Error).message);
  }
  const prompt = r.str([...p, 'prompt']).trim() === '' && promptDefault !== undefined ? promptDefault : r.str([...p, 'prompt']);
  if (prompt.trim() === '') r.fail([...p, 'prompt'], 'is required');
  const out: TaskTemplate = { project_id: project, prompt, agent_type: r.str([...p, 'agent']).trim() };
  const root = r.str([...p, 'project_root']).trim();
  if (root) out.project_root = root;
  const isolation = r.str([...p, 'isolation']).trim();
  if (isolation) {
    if (isolation !== 'worktree' && isolation !== 'none') r.fail([...p, 'isolation'], `must be "worktree" or "none", got ${JSON.stringify(isolation)}`);
    out.isolation = isolation;
  }
  const baseRef = r.str([...p, 'base']).trim();
  if (baseRef) out.base = baseRef;
  return out;
}

/** The `schedules:` section: fails closed (a bad cron, time zone or policy is a config error). */
export function buildSchedules(r: RawReader): Record<string, ScheduleConfig> | undefined {
  const v = r.get(['schedules']);
  if (v === undefined || v === null) return undefined;
  const out: Record<string, ScheduleConfig> = {};
  for (const name of Object.keys(r.map(['schedules'])).sort()) {
    const p = ['schedules', name];
    checkName(r, p, name);
    r.map(p);
    const cron = r.str([...p, 'cron']).trim();
    if (cron === '') r.fail([...p, 'cron'], 'is required');
    const timezone = r.str([...p, 'timezone']).trim() || 'UTC';
    try {
      new Cron(cron, { paused: true });
    } catch (err) {
      r.fail([...p, 'cron'], (err as Error).message);
    }
    try {
      new Cron(cron, { paused: true, timezone }).nextRun();
    } catch {
      r.fail([...p, 'timezone'], `${JSON.stringify(timezone)} is not an IANA time zone`);
    }
    out[name] = {
      name,
      cron,
      timezone,
      missed: oneOf(r, [...p, 'missed'], MISSED_RUN_POLICIES, 'skip'),
      max_missed: positiveInt(r, [...p, 'max_missed'], SCHEDULE_DEFAULT_MAX_MISSED),
      concurrency: oneOf(r, [...p, 'concurrency'], CONCURRENCY_POLICIES, 'skip'),
      task: buildTemplate(r, p),
    };
  }
  return out;
}

/** The `triggers:` section (HTTP triggers). */
export function buildTriggers(r: RawReader): Record<string, TriggerConfig> | undefined {
  const v = r.get(['triggers']);
  if (v === undefined || v === null) return undefined;
  const out: Record<string, TriggerConfig> = {};
  for (const name of Object.keys(r.map(['triggers'])).sort()) {
    const p = ['triggers', name];
    checkName(r, p, name);
    r.map(p);
    const hash = r.str([...p, 'token_sha256']).trim().toLowerCase();
    if (hash !== '' && !/^[0-9a-f]{64}$/.test(hash)) r.fail([...p, 'token_sha256'], 'must be 64 hex digits (the sha256 of the token)');
    out[name] = {
      name,
      token_sha256: hash || undefined,
      rate_per_minute: positiveInt(r, [...p, 'rate_per_minute'], TRIGGER_DEFAULT_RATE_PER_MINUTE),
      max_payload_bytes: positiveInt(r, [...p, 'max_payload_bytes'], TRIGGER_DEFAULT_MAX_PAYLOAD_BYTES),
      task: buildTemplate(r, p),
    };
  }
  return out;
}
