import { DeliveryOptions, deliverWebhook, NeedsInputPayload, RunStopPayload, WarnSink, WebhookSender, webhookWanted, WebhookSettings } from './delivery';

export const WEBHOOK_SETTINGS = Symbol('WEBHOOK_SETTINGS');

/**
 * The app's `webhook:` settings and the one sender of webhooks for the runs the app starts:
 * RunnerService gets it as WEBHOOK_SENDER and hands it to every job (D14). A job's own config
 * (`run-agent job --config`) wins over the app's settings. A plain class (no NestJS import, for the
 * CLI's hot path): WebhookModule provides it through createWebhookService.
 */
export class WebhookService implements WebhookSender {
  constructor(private readonly configured: WebhookSettings | undefined) {}

  get enabled(): boolean {
    return webhookWanted(this.configured);
  }

  get settings(): WebhookSettings | undefined {
    return this.configured;
  }

  wanted(settings: WebhookSettings | undefined = this.configured, event = 'run_stop'): boolean {
    return webhookWanted(settings, event);
  }

  deliver(settings: WebhookSettings | undefined, payload: RunStopPayload | NeedsInputPayload, bus?: WarnSink, opts?: DeliveryOptions): Promise<boolean> {
    const cfg = settings ?? this.configured;
    if (!webhookWanted(cfg, payload.event)) return Promise.resolve(false);
    return deliverWebhook(cfg, payload, bus, opts);
  }
}
