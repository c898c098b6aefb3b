import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AppConfig, newRunInfo, RunInfo, runInfoFile, type RunsLayout, writeRunInfo, RUN_PROMPT_FILE } from '@app/storage';
import type { SubTaskRequest, SubTaskStarted, SubTaskStarter } from './mcp.types';
import { preflightSubTask } from './sub-task-preflight';

/** What the detached `run-agent job` of a sub-task prints (its own messages, not the agent's output). */
export const MCP_JOB_LOG = 'mcp-job.log';

export interface DetachedJobStarterOptions {
  /** The `run-agent` executable of this installation (the job runs through it). */
  cli: string;
  /** The runs root's layout (of the composition root). */
  layout: RunsLayout;
  config?: AppConfig;
  /** The config file the job loads (`--config`), when `run-agent mcp` loaded one. */
  configPath?: string;
  /** Extra environment of the job (the CLI passes CONDUCTOR_CONFIG on, as `run-agent job` does). */
  env?: Record<string, string>;
}

/**
 * `task_start` of `run-agent mcp`: each sub-task is a `run-agent job` in its own session and
 * process group (detached, stdin closed, its messages in <run>/mcp-job.log), so the task outlives
 * the MCP session: a client that hangs up, SIGTERMs the server or its process group leaves it
 * running to its end (DONE, run-info, RUN_STOP, webhooks). Everything that can refuse the job
 * (ids, prompt, working directory, agent, binary) is checked before the run folder is created.
 */
export class DetachedJobStarter implements SubTaskStarter {
  private readonly active = new Set<string>();
  private readonly failures = new Map<string, string>();

  constructor(private readonly opts: DetachedJobStarterOptions) {}

  async start(req: SubTaskRequest): Promise<SubTaskStarted> {
    const { layout, taskId, key, cwd, env, agentType } = await preflightSubTask(req, this.opts, (k) => this.active.has(k));
    const runDir = layout.allocateRunDir(req.projectId, taskId);
    // the job reads the prompt from here and then writes its own prompt.md over it
    const promptFile = join(runDir.dir, RUN_PROMPT_FILE);
    writeFileSync(promptFile, req.prompt);
    const args = [this.opts.cli, 'job', '--root', layout.root, '--project', req.projectId, '--task', taskId, '--run-id', runDir.runId, '--prompt-file', promptFile];
    if (req.agent) args.push('--agent', req.agent);
    if (cwd) args.push('--cwd', cwd);
    if (req.parentRunId) args.push('--parent-run-id', req.parentRunId);
    for (const c of req.doneCriteria ?? []) args.push('--done-when', c);
    if (req.doneCriteriaTimeout) args.push('--done-timeout', req.doneCriteriaTimeout);
    if (this.opts.configPath) args.push('--config', this.opts.configPath);
    const logPath = join(runDir.dir, MCP_JOB_LOG);
    const log = openSync(logPath, 'a');
    try {
      const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log], cwd: layout.taskDir(req.projectId, taskId), env });
      this.failures.delete(key);
      this.active.add(key);
      const record = { run_id: runDir.runId, project_id: req.projectId, task_id: taskId, agent: agentType, parent_run_id: req.parentRunId };
      child.once('error', (err) => this.ended(key, runDir.dir, record, `start run-agent job: ${err.message}`));
      child.once('exit', (code, signal) => this.ended(key, runDir.dir, record, code === 0 ? undefined : lastLine(logPath) ?? `run-agent job ended with ${signal ?? `exit code ${code}`}`));
      child.unref();
    } finally {
      closeSync(log);
    }
    return { project_id: req.projectId, task_id: taskId, run_id: runDir.runId, status: 'started' };
  }

  /**
   * A job that ended before recording its run (e.g. its config turned invalid since the server
   * loaded it) gets a failed run-info with its reason, so the run is not left looking as starting.
   */
  private ended(key: string, runDir: string, record: Pick<RunInfo, 'run_id' | 'project_id' | 'task_id' | 'agent' | 'parent_run_id'>, error: string | undefined): void {
    this.active.delete(key);
    if (!error || existsSync(runInfoFile(runDir))) return;
    this.failures.set(key, error);
    try {
      writeRunInfo(runInfoFile(runDir), newRunInfo({ ...record, status: 'failed', end_time: new Date(), error_summary: error }));
    } catch {
      // the failure stays known to this session (task_status reports it)
    }
  }

  isActive(projectId: string, taskId: string): boolean {
    return this.active.has(`${projectId}/${taskId}`);
  }

  failure(projectId: string, taskId: string): string | undefined {
    return this.failures.get(`${projectId}/${taskId}`);
  }
}

function lastLine(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').at(-1)?.trim() || undefined;
  } catch {
    return undefined;
  }
}
