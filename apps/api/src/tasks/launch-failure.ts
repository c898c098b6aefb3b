import * as fs from 'node:fs';
import * as path from 'node:path';
import { RUN_INFO_FILE, RunInfo, writeRunInfo } from '@app/storage';
import type { LaunchRequest } from './task-launcher';

/**
 * A loop that failed before its first run started (agent gone since the 422 check, TASK.lock held,
 * bad config…) leaves the pre-allocated run folder empty, so the task would read as idle. Record
 * the failure there instead: status, API and UI then show a failed run with the reason.
 * Returns true when it wrote the record.
 */
export function recordStartFailure(req: LaunchRequest, reason: string): boolean {
  const file = path.join(req.runDir, RUN_INFO_FILE);
  if (!fs.existsSync(req.runDir) || fs.existsSync(file)) return false;
  const now = new Date();
  const info: RunInfo = {
    version: 1,
    run_id: req.runId,
    project_id: req.projectId,
    task_id: req.taskId,
    agent: req.agentType,
    pid: 0,
    pgid: 0,
    start_time: now,
    end_time: now,
    exit_code: -1,
    status: 'failed',
    error_summary: `task did not start: ${reason}`,
    agent_version: '',
  };
  writeRunInfo(file, info, { fsync: true });
  return true;
}
