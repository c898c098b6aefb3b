import { existsSync } from 'node:fs';
import type { BusWriters } from '@app/messagebus';
import { isTaskDone, runInfoFile, type RunsLayout } from '@app/storage';
import type { PlannerEntry, PlannerState } from './planner-state';

/**
 * "The planner owns what it started" (issue #11): on server start, every entry that was `running`
 * in the persisted state and whose task has no DONE gets its loop back. The entry keeps its place
 * (order, so FIFO holds) and gets a fresh first run folder (its old one holds the interrupted run);
 * the loop is launched with adopt, so a still-live agent is waited for, never started twice.
 * Returns the entries to launch; a bus message on the task says what happened.
 */
export function reclaimInterruptedLoops(persisted: PlannerState, state: PlannerState, layout: RunsLayout, writers: BusWriters): PlannerEntry[] {
  const out: PlannerEntry[] = [];
  for (const old of persisted.entries.filter((e) => e.state === 'running')) {
    const taskDir = layout.taskDir(old.projectId, old.taskId);
    let done = false;
    try {
      done = isTaskDone(taskDir);
    } catch {
      done = true; // a DONE directory: leave it to an operator
    }
    // no run-info yet: the server died before the agent started; the grace re-queue handles it
    if (done || !existsSync(runInfoFile(old.runDir))) continue;
    state.entries = state.entries.filter((e) => e.runId !== old.runId);
    const { runId, dir } = layout.allocateRunDir(old.projectId, old.taskId);
    const entry: PlannerEntry = { ...old, runId, runDir: dir, state: 'running', startedAt: new Date() };
    state.entries.push(entry);
    out.push(entry);
    void writers(layout.taskBus(old.projectId, old.taskId))
      .append({
        type: 'INFO',
        project_id: old.projectId,
        task_id: old.taskId,
        run_id: '',
        body: `server restarted: the task loop of run ${old.runId} was interrupted without DONE; restarting it (adopting a live agent, if any)`,
      })
      .catch(() => undefined);
  }
  return out;
}
