import { Module } from '@nestjs/common';

/** The sandbox lib is functions only (bwrapArgs, checkSandbox); the module marks the lib for Nest apps. */
@Module({})
export class SandboxModule {}
