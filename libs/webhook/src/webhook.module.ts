import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { WEBHOOK_SENDER, type WebhookSettings } from './delivery';
import { createWebhookService } from './webhook.providers';
import { WEBHOOK_SETTINGS, WebhookService } from './webhook.service';

// WebhookService is a plain class: built from the settings token
const service = { provide: WebhookService, inject: [{ token: WEBHOOK_SETTINGS, optional: true }], useFactory: (settings?: WebhookSettings) => createWebhookService(settings) };

/** Typed options of WebhookModule: the `webhook:` section of the config (absent: no delivery). */
export interface WebhookModuleOptions {
  webhook?: WebhookSettings;
}

export interface WebhookModuleAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: any[];
  useFactory: (...deps: any[]) => WebhookModuleOptions | undefined;
}

/** WebhookService, also provided as the runner's WEBHOOK_SENDER (global to the app). */
@Module({})
export class WebhookModule {
  /** `config` is the app's AppConfig (or anything with an optional `webhook` section). */
  static forRoot(config?: WebhookModuleOptions): DynamicModule {
    return {
      module: WebhookModule,
      global: true,
      providers: [{ provide: WEBHOOK_SETTINGS, useValue: config?.webhook }, service, { provide: WEBHOOK_SENDER, useExisting: WebhookService }],
      exports: [WebhookService, WEBHOOK_SENDER],
    };
  }

  static forRootAsync(opts: WebhookModuleAsyncOptions): DynamicModule {
    return {
      module: WebhookModule,
      global: true,
      imports: opts.imports ?? [],
      providers: [{ provide: WEBHOOK_SETTINGS, inject: opts.inject ?? [], useFactory: (...deps: any[]) => opts.useFactory(...deps)?.webhook }, service, { provide: WEBHOOK_SENDER, useExisting: WebhookService }],
      exports: [WebhookService, WEBHOOK_SENDER],
    };
  }
}
