import { RunInfo, ZERO_TIME } from './run-info';

/**
 * The one `RunInfo` factory: a running record (started now, not ended, exit -1, no process yet)
 * with the given fields on top. Fields given as `undefined` keep the default.
 */
export function newRunInfo(fields: Pick<RunInfo, 'run_id' | 'project_id' | 'task_id' | 'agent'> & Partial<RunInfo>): RunInfo {
  const info: RunInfo = {
    version: 1,
    run_id: '',
    project_id: '',
    task_id: '',
    agent: '',
    pid: 0,
    pgid: 0,
    start_time: new Date(),
    end_time: ZERO_TIME,
    exit_code: -1,
    status: 'running',
    agent_version: '',
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (info as unknown as Record<string, unknown>)[key] = value;
  }
  return info;
}
