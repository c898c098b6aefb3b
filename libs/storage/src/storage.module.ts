import { Module } from '@nestjs/common';
import { ChangeFeed } from './change-feed';
import { LivenessProbe } from './liveness';

/** Provides the process-wide seams: one LivenessProbe and one ChangeFeed (shared watchers). */
@Module({
  providers: [LivenessProbe, ChangeFeed],
  exports: [LivenessProbe, ChangeFeed],
})
export class StorageModule {}
