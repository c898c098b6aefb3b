import { BusWriter } from '@app/messagebus';
import { deliverWebhook, RunStopPayload, webhookWanted } from '@app/webhook';
import { rfc3339Nano } from './time-format';
import type { JobOptions, JobResult } from './job-options';

/** The run_stop webhook of a finished run (D14: `run-agent job` waits for it before exiting). */
export function startWebhook(opts: JobOptions, result: JobResult, bus: BusWriter): Promise<boolean> | undefined {
  const cfg = opts.config?.webhook;
  const sender = opts.webhookSender;
  if (!(sender ? sender.wanted(cfg) : webhookWanted(cfg)) || !result.info) return undefined;
  const info = result.info;
  const started = info.start_time;
  const stopped = info.end_time;
  const payload: RunStopPayload = {
    event: 'run_stop',
    project_id: info.project_id,
    task_id: info.task_id,
    run_id: info.run_id,
    agent_type: info.agent,
    status: info.status,
    exit_code: info.exit_code,
    started_at: rfc3339Nano(started),
    stopped_at: rfc3339Nano(stopped),
    duration_seconds: (stopped.getTime() - started.getTime()) / 1000,
  };
  if (info.error_summary) payload.error_summary = info.error_summary;
  if (sender) return sender.deliver(cfg, payload, bus, { backoffMs: opts.webhookBackoffMs });
  return deliverWebhook(cfg!, payload, bus, { backoffMs: opts.webhookBackoffMs });
}
