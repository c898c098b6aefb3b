import { IsBoolean, IsOptional, IsString } from 'class-validator';

/** Body of #30/#38: exactly `{type?, body}`. */
export class PostMessageDto {
  @IsOptional()
  @IsString()
  type?: string;

  @IsString()
  body!: string;
}

/** Body of #38: `resume: true` wakes the task (removes DONE, restarts its loop with the message in the prompt). */
export class PostTaskMessageDto extends PostMessageDto {
  @IsOptional()
  @IsBoolean()
  resume?: boolean;
}

/** Body of #19. */
export class PostV1MessageDto extends PostMessageDto {
  @IsString()
  project_id!: string;

  @IsOptional()
  @IsString()
  task_id?: string;

  @IsOptional()
  @IsString()
  run_id?: string;
}
