import type { ChildProcess } from 'node:child_process';
import { REPO_ROOT, RUN_AGENT } from '../../utils/cli';
import { spawnSleeper } from '../../utils/run-fixtures';

// The run fixtures live in test/utils; re-exported for the orchestration specs that import them from here.
export { Sandbox, running as runningInfo, runInfo as runInfoOf, writeRun } from '../../utils/run-fixtures';
export type { CliResult } from '../../utils/cli';
export const REPO = REPO_ROOT;
export { RUN_AGENT };
export const PROJECT = 'proj';

/** A live process in its own process group (a stand-in for a running agent). */
export function liveGroupLeader(): ChildProcess {
  return spawnSleeper(300);
}
