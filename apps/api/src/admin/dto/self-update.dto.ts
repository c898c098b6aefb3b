import { IsOptional, IsString } from 'class-validator';

/** Body of POST /api/v1/admin/self-update; unknown fields are rejected by the global pipe. */
export class SelfUpdateDto {
  /** A tarball made by `npm pack`, a version (`0.2.0`) or `conductor-loop@0.2.0`. */
  @IsOptional() @IsString() package?: string;
  /** Upstream's field name, kept for its clients: must point to a .tgz. */
  @IsOptional() @IsString() binary_path?: string;
}
