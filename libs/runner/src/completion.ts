import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BusMessage, type BusWriter, type BusWriters, readMessages } from '@app/messagebus';
import { isStaleEpoch, isZeroTime, type OwnerFence, readRunInfo, RunInfo, runInfoFile, runInfoIn, withFileLock, runOutputFile, taskRunsDir, DONE_FILE, RUNS_DIR_NAME } from '@app/storage';
import { errorText } from './runner.errors';
import { taskCriteriaView } from './criteria/criteria-view';
import { rfc3339Nano, rfc3339NanoFromNs } from './time-format';

export const PROPAGATION_KIND = 'task_completion_propagation';
const STATE_FILE = 'TASK-COMPLETE-FACT-PROPAGATION.yaml';
const LOCK_FILE = 'TASK-COMPLETE-FACT-PROPAGATION.lock';

export interface PropagationInput {
  root: string;
  projectId: string;
  taskId: string;
  taskDir: string;
  projectBus: string;
  taskBus: string;
}

export interface PropagationResult {
  posted: boolean;
  key: string;
  messageId?: string;
}

interface RunSummary {
  ids: string[];
  infos: { id: string; info: RunInfo }[];
  missing: string[];
}

function summariseRuns(taskDir: string): RunSummary {
  const runsDir = taskRunsDir(taskDir);
  const ids = existsSync(runsDir) ? readdirSync(runsDir).sort() : [];
  const infos: { id: string; info: RunInfo }[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    try {
      infos.push({ id, info: readRunInfo(runInfoIn(runsDir, id)) });
    } catch {
      missing.push(id);
    }
  }
  return { ids, infos, missing };
}

/**
 * The identity of one completion is the DONE marker itself (D4): its mtime, inode and device.
 * Unlike upstream, the task's FACT count is not part of the key, so the follow-up FACT this
 * function posts never makes a later re-run post a second completion FACT.
 */
export function completionKey(donePath: string): string {
  const st = statSync(donePath, { bigint: true });
  return createHash('sha256')
    .update(`${rfc3339NanoFromNs(st.mtimeNs)}|ino=${st.ino}|dev=${st.dev}`)
    .digest('hex');
}

function readStateKey(taskDir: string): string | undefined {
  const path = join(taskDir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  const m = /^last_propagation_key:\s*"?([0-9a-f]*)"?\s*$/m.exec(readFileSync(path, 'utf8'));
  return m?.[1] || undefined;
}

/** Temp file + rename (readers never see a partial file); no fsync: the key is re-derivable. */
function writeState(taskDir: string, key: string, messageId: string, at: Date): void {
  const path = join(taskDir, STATE_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(
    temp,
    `version: 1\nlast_propagation_key: ${key}\nlast_project_message_id: ${messageId}\nlast_propagated_at: ${rfc3339Nano(at)}\n`,
  );
  renameSync(temp, path);
}

function findExisting(projectBus: string, key: string, taskId: string): BusMessage | undefined {
  if (!existsSync(projectBus)) return undefined;
  // Parsing the whole project bus is costly; the key text must appear in it for a match.
  if (!readFileSync(projectBus, 'utf8').includes(key)) return undefined;
  const messages = readMessages(projectBus);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.type.toUpperCase() !== 'FACT' || m.meta?.kind !== PROPAGATION_KIND) continue;
    if (m.meta.propagation_key !== key) continue;
    if (!m.meta.source_task_id || m.meta.source_task_id === taskId) return m;
  }
  return undefined;
}

/** Posts the project-bus completion FACT once per completion (runner-agents.md §3.6, D4). */
export async function propagateCompletion(input: PropagationInput, writers: BusWriters, fence?: OwnerFence): Promise<PropagationResult> {
  const donePath = join(input.taskDir, DONE_FILE);
  if (!existsSync(donePath)) return { posted: false, key: '' };
  const key = completionKey(donePath);
  return withFileLock(join(input.taskDir, LOCK_FILE), { timeoutMs: 5000 }, async () => {
    if (readStateKey(input.taskDir) === key) return { posted: false, key };
    const existing = findExisting(input.projectBus, key, input.taskId);
    if (existing) {
      writeState(input.taskDir, key, existing.msg_id, new Date());
      return { posted: false, key, messageId: existing.msg_id };
    }
    const message = buildCompletionMessage(input, key, donePath);
    const posted = await writers(input.projectBus, { fence }).append(message);
    writeState(input.taskDir, key, posted.msg_id, new Date());
    return { posted: true, key, messageId: posted.msg_id };
  });
}

/**
 * Posts the task-bus follow-up and never throws (a propagation failure does not fail the task),
 * except for a stale owner (issue #31), which must write nothing more.
 */
export async function propagateAndReport(input: PropagationInput, taskBus: BusWriter, writers: BusWriters, fence?: OwnerFence): Promise<PropagationResult | undefined> {
  const base = { project_id: input.projectId, task_id: input.taskId, run_id: '' };
  try {
    const result = await propagateCompletion(input, writers, fence);
    const body = result.posted
      ? `task completion facts propagated to project bus (msg_id=${result.messageId} key=${result.key})`
      : `task completion facts already propagated (key=${result.key})`;
    await taskBus.append({ ...base, type: result.posted ? 'FACT' : 'INFO', body });
    return result;
  } catch (err) {
    if (isStaleEpoch(err)) throw err;
    await taskBus.append({ ...base, type: 'ERROR', body: `task completion fact propagation failed: ${errorText(err)}` }).catch(() => undefined);
    return undefined;
  }
}

function timeText(d: Date | undefined): string {
  return d && !isZeroTime(d) ? rfc3339Nano(d) : '';
}

function buildCompletionMessage(input: PropagationInput, key: string, donePath: string) {
  const runs = summariseRuns(input.taskDir);
  const latest = runs.infos[runs.infos.length - 1];
  const latestDir = latest ? join(input.taskDir, RUNS_DIR_NAME, latest.id) : undefined;
  const latestOutput = latest ? latest.info.output_path || runOutputFile(latestDir!) : undefined;
  const latestRunInfo = latestDir ? runInfoFile(latestDir) : undefined;
  const taskMessages = existsSync(input.taskBus) ? readMessages(input.taskBus) : [];
  const facts = taskMessages.filter((m) => m.type.toUpperCase() === 'FACT');
  const runEvent = latest
    ? [...taskMessages].reverse().find((m) => (m.type === 'RUN_STOP' || m.type === 'RUN_CRASH') && m.run_id === latest.id)
    : undefined;
  const count = (s: string): number => runs.infos.filter((r) => r.info.status === s).length;
  const doneMtime = rfc3339NanoFromNs(statSync(donePath, { bigint: true }).mtimeNs);
  const now = rfc3339Nano(new Date());

  const parents: NonNullable<BusMessage['parents']> = [];
  const seen = new Set<string>();
  if (runEvent) {
    parents.push({ msg_id: runEvent.msg_id, kind: 'source_run_event' });
    seen.add(runEvent.msg_id);
  }
  for (const f of facts.slice(-20)) {
    if (seen.has(f.msg_id)) continue;
    seen.add(f.msg_id);
    parents.push({ msg_id: f.msg_id, kind: 'source_fact' });
  }
  const links: NonNullable<BusMessage['links']> = [
    { url: input.taskBus, label: 'task message bus', kind: 'task_bus' },
    { url: donePath, label: 'task DONE marker', kind: 'task_done' },
  ];
  if (latestRunInfo) links.push({ url: latestRunInfo, label: 'latest run-info.yaml', kind: 'run_info' });
  if (latestOutput) links.push({ url: latestOutput, label: 'latest output.md', kind: 'output' });

  const meta: Record<string, string> = {
    kind: PROPAGATION_KIND,
    propagation_key: key,
    source_project_id: input.projectId,
    source_task_id: input.taskId,
    source_task_dir: input.taskDir,
    source_task_bus_path: input.taskBus,
    source_done_path: donePath,
    source_done_mtime: doneMtime,
    propagated_at: now,
    run_count: String(runs.ids.length),
    completed_run_count: String(count('completed')),
    failed_run_count: String(count('failed')),
    running_run_count: String(count('running')),
    task_fact_count: String(facts.length),
    source_run_ids: runs.ids.join(','),
    missing_run_info_ids: runs.missing.join(','),
    source_latest_run_id: latest?.id ?? '',
    source_latest_status: latest?.info.status ?? '',
    source_output_path: latestOutput ?? '',
    source_run_info_path: latestRunInfo ?? '',
    latest_run_event_id: runEvent?.msg_id ?? '',
    latest_run_event_type: runEvent?.type ?? '',
  };
  if (latest) {
    meta.source_latest_exit_code = String(latest.info.exit_code);
    meta.source_latest_start_time = timeText(latest.info.start_time);
    meta.source_latest_end_time = timeText(latest.info.end_time);
  }
  if (runEvent) meta.latest_run_event_ts = rfc3339Nano(runEvent.ts);
  // issue #33: what verified this DONE
  const criteria = taskCriteriaView(input.taskDir, runs.infos.map((r) => ({ runId: r.id, info: r.info })));
  if (criteria) {
    meta.criteria_state = criteria.state;
    meta.criteria_commands = String(criteria.commands.length);
    meta.criteria_rejected = String(criteria.rejected);
    if (criteria.run_id) meta.criteria_run_id = criteria.run_id;
  }

  const lines = [
    'task completion propagated to project scope',
    '',
    `source_project_id: ${input.projectId}`,
    `source_task_id: ${input.taskId}`,
    `source_task_dir: ${input.taskDir}`,
    `source_task_bus: ${input.taskBus}`,
    `source_done_file: ${donePath}`,
    `source_done_mtime: ${doneMtime}`,
    `propagated_at: ${now}`,
    `propagation_key: ${key}`,
    '',
    'run_outcome_summary:',
    `- run_count: ${runs.ids.length}`,
    `- completed_runs: ${count('completed')}`,
    `- failed_runs: ${count('failed')}`,
    `- running_runs: ${count('running')}`,
    `- run_ids: ${runs.ids.length ? runs.ids.join(', ') : '(none)'}`,
  ];
  if (runs.missing.length) lines.push(`- missing_run_info_ids: ${runs.missing.join(', ')}`);
  if (latest) {
    lines.push(
      `- latest_run_id: ${latest.id}`,
      `- latest_status: ${latest.info.status}`,
      `- latest_exit_code: ${latest.info.exit_code}`,
      `- latest_start_time: ${timeText(latest.info.start_time)}`,
      `- latest_end_time: ${timeText(latest.info.end_time)}`,
      `- latest_run_info_path: ${latestRunInfo}`,
      `- latest_output_path: ${latestOutput}`,
    );
  }
  if (runEvent) {
    lines.push(
      `- latest_run_event_msg_id: ${runEvent.msg_id}`,
      `- latest_run_event_type: ${runEvent.type}`,
      `- latest_run_event_ts: ${rfc3339Nano(runEvent.ts)}`,
    );
  }
  if (criteria) {
    lines.push('', 'completion_criteria:', `- state: ${criteria.state}`, `- rejected_done_count: ${criteria.rejected}`);
    for (const c of criteria.commands) lines.push(`- command: ${c.command.replace(/\s+/g, ' ')}`);
    if (criteria.run_id) lines.push(`- checked_run_id: ${criteria.run_id}`);
  }
  lines.push('', 'task_fact_signals:', `- count: ${facts.length}`);
  if (facts.length === 0) {
    lines.push('- sample: (none)');
  } else {
    const last = facts[facts.length - 1];
    lines.push(`- latest_fact_msg_id: ${last.msg_id}`, `- latest_fact_ts: ${rfc3339Nano(last.ts)}`, '- sample:');
    for (const f of facts.slice(-5)) {
      let first = (f.body.split('\n')[0] ?? '').replace(/\s+/g, ' ').trim();
      if (first.length > 160) first = first.slice(0, 157) + '...';
      lines.push(`  - [${rfc3339Nano(f.ts)}] ${f.msg_id} ${first}`);
    }
  }
  return {
    type: 'FACT',
    project_id: input.projectId,
    task_id: input.taskId,
    run_id: latest?.id ?? '',
    parents,
    links,
    meta,
    body: lines.join('\n'),
  };
}
