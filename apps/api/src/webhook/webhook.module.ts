import { DynamicModule, Module } from '@nestjs/common';
import type { WebhookSettings } from '@app/runner';
import { WEBHOOK_SETTINGS, WebhookService } from './webhook.service';

@Module({})
export class WebhookModule {
  /** `config` is the server's AppConfig (or anything with an optional `webhook` section). */
  static forRoot(config?: { webhook?: WebhookSettings }): DynamicModule {
    return {
      module: WebhookModule,
      providers: [{ provide: WEBHOOK_SETTINGS, useValue: config?.webhook }, WebhookService],
      exports: [WebhookService],
    };
  }
}
