import { validateProjectId, validateTaskId } from '@app/storage';
import type { McpScope } from './mcp.types';
import { McpInputError } from './tool-result';

const given = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v.trim() : undefined);

/** The project a tool acts on: its `project` argument, else the server's scope (validated as the CLI does). */
export function projectOf(scope: McpScope, project?: string): string {
  const id = given(project) ?? scope.projectId;
  if (!id) throw new McpInputError('project is required: this server is not scoped to a project (pass project)');
  return validateProjectId(id);
}

/** The task a bus tool acts on: its `task` argument, else the scope's task when the project is the scope's. */
export function busTaskOf(scope: McpScope, projectId: string, task?: string): string | undefined {
  const explicit = given(task);
  if (explicit) return validateTaskId(explicit);
  return projectId === scope.projectId ? scope.taskId : undefined;
}

/** The task a task tool acts on: its `task` argument (required). */
export function taskOf(task: string | undefined): string {
  const id = given(task);
  if (!id) throw new McpInputError('task is required');
  return validateTaskId(id);
}
