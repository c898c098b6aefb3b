import type { JetStreamManager } from '@nats-io/jetstream';
import { ensureConsumer, natsClient } from './nats';
import { CONTROL_STREAM } from './subjects';

const FILTER = 'conductor.control.>';

/**
 * The host's durable consumer of CONDUCTOR_CONTROL. A process of this host that was killed left
 * writes it had taken but not acked; JetStream would redeliver them only after the ack wait,
 * while the writes sent after them reach the new process at once, so one task's writes would
 * apply out of order (a resume after a later cancel). A consumer left with unacked deliveries is
 * therefore created again from its ack floor: everything after the floor comes again in stream
 * order, and what was applied already is answered from APPLIED-WRITES.json, not applied again.
 */
export async function ensureControlConsumer(jsm: JetStreamManager, durable: string, log: (line: string) => void): Promise<void> {
  const { AckPolicy, DeliverPolicy } = natsClient().jetstream;
  const base = { durable_name: durable, ack_policy: AckPolicy.Explicit, filter_subject: FILTER };
  const info = await jsm.consumers.info(CONTROL_STREAM, durable).catch(() => undefined);
  if (!info || info.num_ack_pending === 0) {
    await ensureConsumer(jsm, CONTROL_STREAM, { ...base, deliver_policy: DeliverPolicy.New });
    return;
  }
  const from = info.ack_floor.stream_seq + 1;
  await jsm.consumers.delete(CONTROL_STREAM, durable);
  await jsm.consumers.add(CONTROL_STREAM, { ...base, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from });
  log(`${info.num_ack_pending} control write(s) were taken but not acknowledged by an earlier process: reading again from stream sequence ${from}, in order`);
}
