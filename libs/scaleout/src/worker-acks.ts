import type { JsMsg } from '@nats-io/jetstream';
import type { NatsLink } from './nats';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Retries a JetStream API call through a NATS outage (about a minute). */
export async function retryThroughOutage<T>(link: NatsLink, fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= 120 || link.nc.isClosed()) throw err;
      await sleep(500);
    }
  }
}

/** Acks a task's current delivery (and its duplicates), retrying through a reconnect: a lost ack would rerun the task elsewhere. */
export async function ackDelivery(entry: { msg: JsMsg; others: JsMsg[] }, log: (line: string) => void): Promise<void> {
  for (let i = 0; i < 40; i++) {
    try {
      if (await entry.msg.ackAck({ timeout: 2000 })) {
        for (const m of entry.others) m.ack();
        return;
      }
    } catch {
      // not connected: retry
    }
    await sleep(250);
  }
  log('ack not confirmed; the task may be redelivered and will then be found DONE');
}
