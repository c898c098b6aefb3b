import { DynamicModule, Global, Module } from '@nestjs/common';
import { MessageBusService } from '@app/messagebus';
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
        // the context carries the injected StorageIndex of StorageModule and MessageBusService's writer factory (never ones of its own)
        {
          provide: API_CONTEXT,
          inject: [STORAGE_INDEX, MessageBusService],
          useFactory: (index: StorageIndex, bus: MessageBusService): ApiContext => Object.assign(settings, { index, writers: bus.writers, systemWriters: bus.systemWriters }),
        },
        SseLifecycle,
        AuditLogService,
      ],
      exports: [API_CONTEXT, SseLifecycle, AuditLogService],
    };
  }
}
