import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { observeWebhookFailures } from '@app/webhook';

/**
 * The server log's `webhook_delivery_failed` line (warn): every webhook of this process that failed
 * for good (run_stop, needs_input, budget_exceeded), with its delivery id, the receiver's origin,
 * the attempts made and the last error. The task bus gets its WARN from the delivery itself.
 */
@Injectable()
export class WebhookFailureLog implements OnModuleDestroy {
  private readonly logger = new Logger('webhook');
  private readonly stop = observeWebhookFailures((failure) => this.logger.warn({ msg: 'webhook_delivery_failed', ...failure }));

  onModuleDestroy(): void {
    this.stop();
  }
}
