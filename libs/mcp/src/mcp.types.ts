import type { BusWriters } from '@app/messagebus';
import type { AppConfig, ChangeFeed, RunsLayout, StorageIndex } from '@app/storage';

/** What an MCP server is scoped to: the runs root, and optionally a project, task and calling run. */
export interface McpScope {
  root: string;
  projectId?: string;
  taskId?: string;
  /** The run of the agent that started the server (parent of sub-tasks, `run_id` of posted messages). */
  runId?: string;
  /**
   * `run-agent mcp --project P` / `--task T` confine the session: tools and resources of another
   * project ('project'), or of tasks other than T, its descendants and the tasks it started ('task'),
   * are refused, and listings hold only what is inside.
   */
  confine?: 'project' | 'task';
}

/** `task_start` input after the tool's own checks; the starter validates the rest as its entrance does. */
export interface SubTaskRequest {
  projectId: string;
  /** Absent: the starter generates one. */
  taskId?: string;
  prompt: string;
  agent?: string;
  cwd?: string;
  parentRunId?: string;
  /** Completion criteria of the task (issue #33), validated by the runner's validateTaskSettings. */
  doneCriteria?: string[];
  doneCriteriaTimeout?: string;
}

export interface SubTaskStarted {
  project_id: string;
  task_id: string;
  run_id: string;
  status: string;
}

/**
 * Starts sub-tasks for `task_start`. The CLI's server runs a job in-process (as `run-agent job`
 * does); the HTTP server goes through its own task launcher (as POST /api/v1/tasks does).
 */
export interface SubTaskStarter {
  start(req: SubTaskRequest): Promise<SubTaskStarted>;
  /** True while a task started here is still being run by this process. */
  isActive(projectId: string, taskId: string): boolean;
  /** Why a task started here failed before its run could record it. */
  failure(projectId: string, taskId: string): string | undefined;
}

export interface ConductorMcpOptions {
  scope: McpScope;
  config?: AppConfig;
  starter: SubTaskStarter;
  /** Change notifications for resource subscriptions and task_wait (the composition root's CHANGE_FEED). */
  feed: ChangeFeed;
  /** Run listing of scope.root (the composition root's StorageIndex; its layout serves the bus tools). */
  index: StorageIndex;
  /** Opens the bus writers of bus_post and ask (MessageBusService.writers of the composition root). */
  writers: BusWriters;
  /** Poll interval of task_wait and of subscriptions' fallback check (default 250 ms). */
  pollMs?: number;
  version?: string;
  /** Body limit of bus_post (default: config storage.max_message_body_bytes, else 16 MiB). */
  maxBodyBytes?: number;
}

/** What the bus and ask tools write through: the runs layout of the scope's root and the bus-writer factory. */
export interface McpBusParts {
  layout: RunsLayout;
  writers: BusWriters;
}
