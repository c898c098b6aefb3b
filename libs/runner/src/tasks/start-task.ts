// "How does a task start": the one use case behind POST /api/v1/tasks, `run-agent task` and a
// scale-out worker's first files (issue #32). Everything that can refuse a start is checked
// before anything is written; then the task's files are seeded once and its first run allocated.
import { mkdirSync } from 'node:fs';
import type { BusMessage, BusWriters } from '@app/messagebus';
import {
  clearStopMarkers,
  normalizeDependsOn,
  StorageError,
  validateNoDependencyCycle,
  validateProjectId,
  validateTaskId,
  writeDependsOn,
  writeTaskPromptIfAbsent,
  type AppConfig,
  type LivenessProbe,
  type RunsLayout,
} from '@app/storage';
import { refuseOrphanedAgent } from '../live-run';
import { checkTaskStart } from '../preflight';
import { errorText, RunnerError, type RunnerErrorCode } from '../runner.errors';
import { threadParentMessage, writeThreadChild, type ThreadParentRef } from '../thread-link';
import { hasSettings, writeTaskSettings, type TaskSettings } from '../usage/task-settings';

/** Which check refused a start: the agent preflight (the API answers 422) or the dependency graph (409). */
export type TaskStartStage = 'preflight' | 'cycle';

/** A refused start: a RunnerError (the CLI maps its code as usual) that names the check. */
export class TaskStartRefused extends RunnerError {
  constructor(
    readonly stage: TaskStartStage,
    code: RunnerErrorCode,
    message: string,
  ) {
    super(code, message);
  }
}

export interface TaskStartRequest {
  layout: RunsLayout;
  config?: AppConfig;
  projectId: string;
  taskId: string;
  /** The prompt as given; empty when an existing TASK.md is the prompt. TASK.md gets it once. */
  prompt?: string;
  /** Config agent name or agent type; undefined = the config's default. */
  agent?: string;
  /** The agents' extra environment (preflight resolves the binary with it). */
  env?: Record<string, string | undefined>;
  /** The agent's working directory (default: the task folder). */
  cwd?: string;
  /** The raw dependency list (normalized here); undefined keeps TASK-CONFIG.yaml as it is. */
  dependsOn?: string[];
  /** Validated settings (validateTaskSettings); written to TASK-SETTINGS.yaml when any is set. */
  settings?: TaskSettings;
  /** An explicit resume: the stop markers of a stopped or cancelled task are cleared. */
  resume?: boolean;
  /** The parent message of a threaded task (validated by the caller, api.md §A.4). */
  threadParent?: BusMessage;
  /** When the thread link was made (the caller's clock format). */
  linkedAt?: string;
  /** Skip the agent preflight (an adopted process, a server that starts no loops). */
  skipPreflight?: boolean;
  /** Refuse a live agent whose loop is gone (a server about to launch a loop, issue #11). */
  refuseOrphan?: boolean;
  probe?: LivenessProbe;
}

/** A start that passed every check; nothing is written yet. */
export interface CheckedTaskStart {
  projectId: string;
  taskId: string;
  taskDir: string;
  /** Normalized; undefined when the request named none. */
  dependsOn?: string[];
  /** The agent type the preflight resolved (undefined when it was skipped). */
  agentType?: string;
}

export interface StartedTask extends CheckedTaskStart {
  runId: string;
  runDir: string;
}

/**
 * Validation (ids, dependencies), the agent preflight (known agent, binary, a prompt or TASK.md),
 * the dependency-cycle check and the orphan refusal: throws and writes nothing on a refusal.
 */
export async function checkStartTask(req: TaskStartRequest): Promise<CheckedTaskStart> {
  const projectId = validateProjectId(req.projectId);
  const taskId = validateTaskId(req.taskId);
  const taskDir = req.layout.taskDir(projectId, taskId);
  const dependsOn = req.dependsOn !== undefined ? normalizeDependsOn(taskId, req.dependsOn) : undefined;
  let agentType: string | undefined;
  if (!req.skipPreflight) {
    try {
      agentType = (await checkTaskStart({ config: req.config, agent: req.agent, prompt: req.prompt, taskDir, env: req.env, cwd: req.cwd ?? taskDir })).type;
    } catch (err) {
      throw new TaskStartRefused('preflight', err instanceof RunnerError ? err.code : 'FATAL_AGENT', errorText(err));
    }
  }
  if (dependsOn?.length) {
    try {
      validateNoDependencyCycle(req.layout.root, projectId, taskId, dependsOn);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'CONFLICT') throw new TaskStartRefused('cycle', 'DEPENDENCY_CYCLE', err.message);
      throw err;
    }
  }
  // never a second agent next to a live one whose runner died (issue #11)
  if (req.refuseOrphan) refuseOrphanedAgent(taskDir, projectId, taskId, req.probe);
  return { projectId, taskId, taskDir, dependsOn, agentType };
}

/**
 * The task's files, once and in this order (a repeat changes nothing already there but the stop
 * markers an explicit resume clears): folder, stop markers, TASK-CONFIG.yaml, TASK-SETTINGS.yaml,
 * TASK.md (stored verbatim, one trailing newline).
 */
export function seedTaskFiles(taskDir: string, seed: { prompt: string; resume?: boolean; dependsOn?: string[]; settings?: TaskSettings }): void {
  mkdirSync(taskDir, { recursive: true });
  if (seed.resume) clearStopMarkers(taskDir);
  if (seed.dependsOn !== undefined) writeDependsOn(taskDir, seed.dependsOn);
  if (seed.settings && hasSettings(seed.settings)) writeTaskSettings(taskDir, seed.settings);
  writeTaskPromptIfAbsent(taskDir, seed.prompt.endsWith('\n') ? seed.prompt.slice(0, -1) : seed.prompt);
}

/** What startTask takes beyond the checks' request: the bus-writer factory of the thread link's parent message. */
export type TaskStartWrite = TaskStartRequest & { writers: BusWriters };

/** The checks, then the files, the first run's folder and the thread link (single host). */
export async function startTask(req: TaskStartWrite): Promise<StartedTask> {
  const checked = await checkStartTask(req);
  const prompt = req.prompt ?? '';
  seedTaskFiles(checked.taskDir, { prompt, resume: req.resume, dependsOn: checked.dependsOn, settings: req.settings });
  const { runId, dir: runDir } = req.layout.allocateRunDir(checked.projectId, checked.taskId);
  if (req.threadParent) {
    const child = { projectId: checked.projectId, taskId: checked.taskId, runId, prompt };
    await writeThreadLink(req.layout, req.writers, child, req.threadParent, req.linkedAt ?? new Date().toISOString());
  }
  return { ...checked, runId, runDir };
}

export const threadParentRef = (m: BusMessage): ThreadParentRef => ({ project_id: m.project_id, task_id: m.task_id, run_id: m.run_id, msg_id: m.msg_id, type: m.type });

/** TASK-THREAD-LINK.yaml and the two USER_REQUEST messages that tie child and parent (single host). */
async function writeThreadLink(layout: RunsLayout, writers: BusWriters, child: { projectId: string; taskId: string; runId: string; prompt: string }, parent: BusMessage, linkedAt: string): Promise<void> {
  const ref = threadParentRef(parent);
  const childMsg = await writeThreadChild({ layout, writers }, child, ref, { linkedAt });
  await writers(layout.taskBus(parent.project_id, parent.task_id)).append(threadParentMessage(ref, child, childMsg.msg_id));
}
