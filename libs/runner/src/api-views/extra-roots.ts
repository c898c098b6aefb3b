import * as fs from 'node:fs';
import * as path from 'node:path';
import { LivenessProbe, readRecordText, readRunInfoReconciled, runIdTime, RunInfo, runInfoFile, taskRunsDir, ZERO_TIME } from '@app/storage';
import type { RunRecord } from './shapes';

/**
 * Runs of `storage.extra_roots` (api.md §1.2 #13, §1.3, cli-storage.md §3.8): the flat layout
 * `<extra>/runs/<run_dir>/` with a run-info.yaml or a legacy cwd.txt. They are listed and counted
 * but live outside the runs root, so their files answer 403 and they are not streamed.
 */
export function readExtraRuns(extraRoots: string[], probe: LivenessProbe): RunRecord[] {
  const out: RunRecord[] = [];
  for (const extra of extraRoots) {
    const runsDir = taskRunsDir(extra); // the same `<dir>/runs/<run>` shape as a task folder
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(runsDir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const dir = path.join(runsDir, e.name);
      const info = readExtraRun(dir, e.name, probe);
      if (info) out.push({ info, projectId: info.project_id || 'unknown', taskId: info.task_id, runId: info.run_id || e.name, dir });
    }
  }
  return out;
}

function readExtraRun(dir: string, name: string, probe: LivenessProbe): RunInfo | undefined {
  try {
    if (fs.existsSync(runInfoFile(dir))) return readRunInfoReconciled(runInfoFile(dir), probe);
    const cwdTxt = path.join(dir, 'cwd.txt');
    if (fs.existsSync(cwdTxt)) return parseCwdTxt(readRecordText(cwdTxt), name, fs.statSync(cwdTxt).mtime);
  } catch {
    return undefined;
  }
  return undefined;
}

/** Legacy `cwd.txt` (KEY=VALUE lines) → a run-info: project = basename of CWD, task = run id. */
export function parseCwdTxt(text: string, dirName: string, mtime: Date): RunInfo {
  const kv = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) kv.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const runId = kv.get('RUN_ID') || dirName;
  const cwd = kv.get('CWD') ?? '';
  const exitText = kv.get('EXIT_CODE');
  const exitCode = exitText === undefined ? -1 : Number.parseInt(exitText, 10);
  const finished = exitText !== undefined;
  return {
    version: 1,
    run_id: runId,
    project_id: cwd ? path.basename(cwd) : 'unknown',
    task_id: runId,
    agent: kv.get('AGENT') ?? '',
    pid: Number.parseInt(kv.get('PID') ?? '0', 10) || 0,
    pgid: 0,
    start_time: runIdTime(runId) ?? ZERO_TIME,
    end_time: finished ? mtime : ZERO_TIME,
    exit_code: exitCode,
    status: finished ? (exitCode === 0 ? 'completed' : 'failed') : 'running',
    cwd: cwd || undefined,
    prompt_path: kv.get('PROMPT'),
    stdout_path: kv.get('STDOUT'),
    stderr_path: kv.get('STDERR'),
    commandline: kv.get('CMD'),
    agent_version: '',
  };
}
