import { Module } from '@nestjs/common';
import { LauncherModule } from '../tasks/launcher.module';
import { SelfUpdateController } from './self-update.controller';
import { SelfUpdateService } from './self-update.service';

/** Admin routes: self-update. Exports SelfUpdateService so task creation can consult its drain. */
@Module({
  imports: [LauncherModule],
  controllers: [SelfUpdateController],
  providers: [SelfUpdateService],
  exports: [SelfUpdateService],
})
export class AdminModule {}
