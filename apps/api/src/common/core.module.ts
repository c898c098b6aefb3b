import { DynamicModule, Global, Module } from '@nestjs/common';
import { STORAGE_INDEX, StorageIndex } from '@app/storage';
import { AuditLogService } from '../security/audit-log.service';
import { SseLifecycle } from '@app/streams';
import { API_CONTEXT, ApiContext, ApiSettings } from './api-context';

/** Server-wide singletons every feature uses: the resolved context, audit, SSE lifecycle. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(settings: ApiSettings): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        // the context carries the injected StorageIndex of StorageModule (never one of its own)
        { provide: API_CONTEXT, inject: [STORAGE_INDEX], useFactory: (index: StorageIndex): ApiContext => Object.assign(settings, { index }) },
        SseLifecycle,
        AuditLogService,
      ],
      exports: [API_CONTEXT, SseLifecycle, AuditLogService],
    };
  }
}
