import { REPO_ROOT, RUN_AGENT } from '../../utils/cli';

// The run fixtures live in test/utils; re-exported for the CLI specs that import them from here.
export { Sandbox, deadPid, postMessages as post, running, runInfo, writeRun } from '../../utils/run-fixtures';
export type { CliResult } from '../../utils/cli';
export const REPO = REPO_ROOT;
export { RUN_AGENT };

export const P = 'my-project';
export const T1 = 'task-20260101-120000-alpha';
export const T2 = 'task-20260101-120000-beta';
export const T3 = 'task-20260101-120000-gamma';
export const T4 = 'task-20260101-120000-delta';
export const T5 = 'task-20260101-120000-epsilon';
