import type { ConsumerInfo, JetStreamManager } from '@nats-io/jetstream';
import { DEFAULT_LEASE_MS, nanos, natsClient } from './nats';
import { TASKS_STREAM, WORKERS_CONSUMER } from './subjects';

const ackWaitMs = (info: ConsumerInfo): number => Math.round((info.config.ack_wait ?? nanos(DEFAULT_LEASE_MS)) / 1_000_000);

async function infoOrUndefined(jsm: JetStreamManager): Promise<ConsumerInfo | undefined> {
  try {
    return await jsm.consumers.info(TASKS_STREAM, WORKERS_CONSUMER);
  } catch {
    return undefined;
  }
}

/**
 * The workers' shared queue consumer, whose ack wait is the lease of every task in the cluster:
 * a worker given a lease sets it, a worker without one uses the queue's (30 s for a new queue).
 * Returns the lease the worker must heartbeat within. Only workers create it: the server used to
 * create it with its own default, so a cluster of `--lease 3s` workers got its killed worker's
 * tasks back after 30 s whenever the server connected first.
 */
export async function ensureWorkersConsumer(jsm: JetStreamManager, requestedMs: number | undefined, log: (line: string) => void): Promise<number> {
  const wanted = requestedMs ?? DEFAULT_LEASE_MS;
  let info = await infoOrUndefined(jsm);
  if (!info) {
    const { AckPolicy, DeliverPolicy } = natsClient().jetstream;
    try {
      await jsm.consumers.add(TASKS_STREAM, {
        durable_name: WORKERS_CONSUMER,
        ack_policy: AckPolicy.Explicit,
        ack_wait: nanos(wanted),
        max_deliver: -1,
        deliver_policy: DeliverPolicy.All,
      });
      return wanted;
    } catch (err) {
      // another worker created it at the same moment: judge its lease below
      info = await infoOrUndefined(jsm);
      if (!info) throw err;
    }
  }
  const current = ackWaitMs(info);
  if (requestedMs === undefined || requestedMs === current) return current;
  await jsm.consumers.update(TASKS_STREAM, WORKERS_CONSUMER, { ack_wait: nanos(requestedMs) });
  log(`the task lease (the queue's ack wait) was ${current} ms; it is ${requestedMs} ms for every worker from now on`);
  return requestedMs;
}
