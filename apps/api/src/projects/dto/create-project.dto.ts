import { IsString } from 'class-validator';

export class CreateProjectDto {
  @IsString()
  project_id!: string;

  @IsString()
  project_root!: string;
}
