import { IsOptional, IsString } from 'class-validator';

/** Body of POST …/tasks/<t>/pull-request; every field is optional (docs/triggers.md, "Pull requests"). */
export class PullRequestDto {
  /** `owner/name`; default: read from the remote's URL. */
  @IsOptional() @IsString() repository?: string;
  /** The git remote the task's branch is pushed to (default origin). */
  @IsOptional() @IsString() remote?: string;
  /** The pull request's base branch (default: the branch the worktree started from). */
  @IsOptional() @IsString() base?: string;
}
