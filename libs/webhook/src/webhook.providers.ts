// The one place a WebhookService is constructed outside NestJS's container (test/arch forbids
// `new` of it elsewhere): the CLI's plain composition root (apps/cli/src/fast/plain-root.ts).
import type { WebhookSettings } from './delivery';
import { WebhookService } from './webhook.service';

/** The webhook sender of an app, as WebhookModule.forRoot({ webhook: settings }) provides it. */
export function createWebhookService(settings?: WebhookSettings): WebhookService {
  return new WebhookService(settings);
}
