import { Type } from 'class-transformer';
import { IsArray, IsInt, IsNumber, IsObject, IsOptional, IsString, ValidateNested } from 'class-validator';

export class ThreadParentDto {
  @IsString() project_id!: string;
  @IsString() task_id!: string;
  @IsString() run_id!: string;
  @IsString() message_id!: string;
  @IsOptional() @IsString() message_type?: string;
}

export class ProcessImportDto {
  @IsInt() pid!: number;
  @IsOptional() @IsInt() pgid?: number;
  @IsOptional() @IsString() commandline?: string;
  @IsOptional() @IsString() stdout_path?: string;
  @IsOptional() @IsString() stderr_path?: string;
  @IsOptional() @IsString() ownership?: string;
}

/** Body of POST /api/v1/tasks (api.md §1.2 #10); unknown fields are rejected by the global pipe. */
export class CreateTaskDto {
  @IsString() project_id!: string;
  @IsString() task_id!: string;
  @IsString() agent_type!: string;
  @IsString() prompt!: string;
  @IsOptional() @IsObject() config?: Record<string, string>;
  @IsOptional() @IsString() project_root?: string;
  @IsOptional() @IsString() attach_mode?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) depends_on?: string[];
  @IsOptional() @ValidateNested() @Type(() => ThreadParentDto) thread_parent?: ThreadParentDto;
  @IsOptional() @IsString() thread_message_type?: string;
  @IsOptional() @ValidateNested() @Type(() => ProcessImportDto) process_import?: ProcessImportDto;
  /** `worktree`: run in a git worktree of project_root's repository (docs/worktrees.md); `none`: not. */
  @IsOptional() @IsString() isolation?: string;
  /** With isolation worktree: branch or commit to start from and merge into (default: the repository HEAD). */
  @IsOptional() @IsString() base?: string;
  /** With isolation worktree: repository paths the task expects to change (overlap warnings). */
  @IsOptional() @IsArray() @IsString({ each: true }) paths?: string[];
  /** Budget of the task tree and resume mode (#18); validated by the runner's validateTaskSettings. */
  @IsOptional() @IsInt() max_tokens?: number;
  @IsOptional() @IsNumber() max_cost_usd?: number;
  @IsOptional() @IsString() max_wall_time?: string;
  @IsOptional() @IsString() resume_mode?: string;
  /** Completion criteria (#33): commands or {command, timeout}; validated by the runner's validateTaskSettings. */
  @IsOptional() @IsArray() done_criteria?: unknown[];
  @IsOptional() @IsString() done_criteria_timeout?: string;
  /** Fan-out governor (#33): delegation depth limit of the task's sub-tree (1..1000). */
  @IsOptional() @IsInt() max_delegation_depth?: number;
  @IsOptional() @IsInt() max_children_per_run?: number;
  @IsOptional() @IsInt() max_runs_per_tree?: number;
}
