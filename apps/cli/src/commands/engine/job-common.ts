import { MAX_BODY_BYTES } from '@app/messagebus';
import { resolve } from 'node:path';
import { AppConfig, configFileFor, generateTaskId, isDirectory, loadConfig, readUserFile, resolveRootSetting, validateProjectId, validateTaskId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { inferScope } from './support/scope';

/** Flags shared by job, job batch, task, task resume and resume. */
export interface RunFlags {
  root?: string;
  config?: string;
  project?: string;
  task?: string;
  agent?: string;
  prompt?: string;
  promptFile?: string;
  cwd?: string;
  conductorUrl?: string;
  timeout?: string;
}

export interface LoadedConfig {
  config?: AppConfig;
  path?: string;
}

/**
 * Config for a run: --config, then $CONDUCTOR_CONFIG (exported to agents so that sub-agent jobs
 * share the parent's limits and webhook), then ./config.yaml|yml or the home HCL file.
 */
export function loadRunConfig(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const path = configFileFor(flag, { env });
  if (!path) return {};
  return { config: loadConfig(path, { env }), path: resolve(path) };
}

/** The caller env given to agents: carries the config path on to sub-agent `run-agent job` calls. */
export function agentCallerEnv(loaded: LoadedConfig): Record<string, string> | undefined {
  if (!loaded.path) return undefined;
  // The body limit travels as a number so an agent's `bus post` (fast path) need not parse the config.
  const limit = loaded.config?.storage?.max_message_body_bytes || MAX_BODY_BYTES;
  return { CONDUCTOR_CONFIG: loaded.path, CONDUCTOR_MAX_MESSAGE_BODY_BYTES: String(limit) };
}

/**
 * Runs root: --root, then the root of the task an agent runs in ($JRUN_TASK_FOLDER), then D8
 * (CONDUCTOR_ROOT / RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs).
 */
export function runRoot(flag: string | undefined, loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): string {
  return resolveRootSetting({ flag, configFlag: loaded.path, env, taskFolder: true, load: (path, e) => loaded.config ?? loadConfig(path, { strict: false, env: e }) });
}

export interface ResolvedScope {
  projectId: string;
  taskId: string;
  generated: boolean;
}

/** D7: --project/--task, else JRUN_* env, else the working directory; a missing task id is generated. */
export function resolveScope(
  flags: { project?: string; task?: string },
  root: string,
  opts: { generate: boolean; inferTask?: boolean; env?: NodeJS.ProcessEnv },
): ResolvedScope {
  const inferred = inferScope(flags, { root, env: opts.env });
  // `task` starts a new loop: only an explicit --task names an existing one (as upstream).
  const scope = opts.inferTask === false ? { project: inferred.project, task: flags.task?.trim() || undefined } : inferred;
  if (!scope.project) throw new UsageError('cannot infer project: pass --project or run from inside a task or project directory');
  validateProjectId(scope.project);
  if (scope.task) {
    try {
      validateTaskId(scope.task);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    return { projectId: scope.project, taskId: scope.task, generated: false };
  }
  if (!opts.generate) throw new UsageError('task is required: pass --task');
  return { projectId: scope.project, taskId: generateTaskId(), generated: true };
}

/** --prompt-file (trimmed, must not be empty) wins over --prompt. */
export function promptFromFlags(flags: { prompt?: string; promptFile?: string }): string | undefined {
  if (flags.promptFile) {
    let text: string;
    try {
      text = readUserFile(flags.promptFile);
    } catch (err) {
      throw new UsageError(`read prompt file: ${(err as Error).message}`);
    }
    if (!text.trim()) throw new UsageError(`prompt file "${flags.promptFile}" is empty`);
    return text.trim();
  }
  const prompt = flags.prompt?.trim();
  return prompt ? prompt : undefined;
}

export { optionalDuration } from '@app/runner';

export function checkDir(path: string | undefined, what: string): string | undefined {
  if (!path) return undefined;
  const abs = resolve(path);
  if (!isDirectory(abs)) throw new UsageError(`${what} not found: ${abs}`);
  return abs;
}

/** nest-commander hands a parent command's flags to the parent: merge them for subcommands. */
export function withParentOptions<T extends object>(command: { parent?: { opts(): object } | null } | undefined, options: T): T {
  return { ...(command?.parent?.opts() ?? {}), ...options } as T;
}
