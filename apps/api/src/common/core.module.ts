import { DynamicModule, Global, Module } from '@nestjs/common';
import { AuditLogService } from '../security/audit-log.service';
import { changeFeedProvider, CHANGE_FEED } from '../sse/change-feed.provider';
import { SseLifecycle } from '../sse/sse-lifecycle.service';
import { API_CONTEXT, ApiContext } from './api-context';

/** Server-wide singletons every feature uses: the resolved context, the change feed, audit, SSE lifecycle. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(ctx: ApiContext): DynamicModule {
    return {
      module: CoreModule,
      providers: [{ provide: API_CONTEXT, useValue: ctx }, changeFeedProvider, SseLifecycle, AuditLogService],
      exports: [API_CONTEXT, CHANGE_FEED, SseLifecycle, AuditLogService],
    };
  }
}
