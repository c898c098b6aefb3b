import * as fs from 'node:fs';
import { newRunInfo, runInfoFile, writeRunInfo } from '@app/storage';
import type { LaunchRequest } from './task-launcher';

/**
 * A loop that failed before its first run started (agent gone since the 422 check, TASK.lock held,
 * bad config…) leaves the pre-allocated run folder empty, so the task would read as idle. Record
 * the failure there instead: status, API and UI then show a failed run with the reason.
 * Returns true when it wrote the record.
 */
export function recordStartFailure(req: LaunchRequest, reason: string): boolean {
  const file = runInfoFile(req.runDir);
  if (!fs.existsSync(req.runDir) || fs.existsSync(file)) return false;
  const now = new Date();
  const info = newRunInfo({
    run_id: req.runId,
    project_id: req.projectId,
    task_id: req.taskId,
    agent: req.agentType,
    start_time: now,
    end_time: now,
    status: 'failed',
    error_summary: `task did not start: ${reason}`,
  });
  writeRunInfo(file, info, { fsync: true });
  return true;
}
