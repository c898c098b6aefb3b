import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { MESSAGEBUS_OPTIONS, MessageBusModuleOptions, MessageBusService } from './messagebus.service';

export interface MessageBusModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: any[];
  useFactory: (...deps: any[]) => MessageBusModuleOptions;
}

/** MessageBusService for an app; needs CHANGE_FEED from StorageModule in the same app. */
@Module({})
export class MessageBusModule {
  static forRoot(options: MessageBusModuleOptions = {}): DynamicModule {
    return {
      module: MessageBusModule,
      global: true,
      providers: [{ provide: MESSAGEBUS_OPTIONS, useValue: options }, MessageBusService],
      exports: [MessageBusService, MESSAGEBUS_OPTIONS],
    };
  }

  static forRootAsync(opts: MessageBusModuleAsyncOptions): DynamicModule {
    return {
      module: MessageBusModule,
      global: true,
      imports: opts.imports ?? [],
      providers: [{ provide: MESSAGEBUS_OPTIONS, inject: opts.inject ?? [], useFactory: opts.useFactory }, MessageBusService],
      exports: [MessageBusService, MESSAGEBUS_OPTIONS],
    };
  }
}
