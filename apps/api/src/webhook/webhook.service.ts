import { Inject, Injectable } from '@nestjs/common';
import { deliverWebhook, RunStopPayload, WarnSink, webhookWanted, WebhookSettings } from '@app/runner';

export const WEBHOOK_SETTINGS = 'WEBHOOK_SETTINGS';

/**
 * The server's view of `webhook:` from the config. Runs launched by the server get the same
 * config, and the runner delivers run_stop after each run (D14); this service exposes the
 * settings and the same delivery for server-side callers.
 */
@Injectable()
export class WebhookService {
  constructor(@Inject(WEBHOOK_SETTINGS) private readonly configured: WebhookSettings | undefined) {}

  get enabled(): boolean {
    return webhookWanted(this.configured);
  }

  get settings(): WebhookSettings | undefined {
    return this.configured;
  }

  deliver(payload: RunStopPayload, bus?: WarnSink): Promise<boolean> {
    if (!this.configured || !this.enabled) return Promise.resolve(false);
    return deliverWebhook(this.configured, payload, bus);
  }
}
