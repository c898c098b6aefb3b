import { IsOptional, IsString } from 'class-validator';

/** Body of POST /api/projects/{p}/tasks/{t}/answer. */
export class AnswerDto {
  @IsString()
  body!: string;

  /** Answer only this question (default: every open question of the task). */
  @IsOptional()
  @IsString()
  question_id?: string;
}
