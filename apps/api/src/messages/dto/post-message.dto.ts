import { IsOptional, IsString } from 'class-validator';

/** Body of #30/#38: exactly `{type?, body}`. */
export class PostMessageDto {
  @IsOptional()
  @IsString()
  type?: string;

  @IsString()
  body!: string;
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
