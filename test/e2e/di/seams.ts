import { AgentExecutor, AgentHandle, AgentLaunch, createAgentExecutor } from '@app/runner';
import { NeedsInputPayload, RunStopPayload, WebhookSender } from '@app/webhook';
import { ChangeFeed, LivenessProbe, RunInfo, WatchOptions } from '@app/storage';

/** An AgentExecutor that records every launch and starts the real local process group. */
export class RecordingExecutor implements AgentExecutor {
  readonly launches: AgentLaunch[] = [];
  private readonly real = createAgentExecutor();

  start(launch: AgentLaunch): Promise<AgentHandle> {
    this.launches.push(launch);
    return this.real.start(launch);
  }
}

/** A LivenessProbe that reports the given pids alive (whatever the kernel says) and records its questions. */
export class PretendProbe extends LivenessProbe {
  readonly asked: number[] = [];
  constructor(private readonly alive: Set<number>) {
    super();
  }

  override isRunAlive(info: Pick<RunInfo, 'pid' | 'pgid'>): boolean {
    this.asked.push(info.pid);
    return this.alive.has(info.pid) || super.isRunAlive(info);
  }
}

/** A ChangeFeed that records the watched paths and watches them for real. */
export class RecordingFeed extends ChangeFeed {
  readonly watched: string[] = [];

  override watch(path: string, onChange: () => void, opts?: WatchOptions): () => void {
    this.watched.push(path);
    return super.watch(path, onChange, opts);
  }
}

/** A webhook sender that records what the app sends (HTTP delivery itself is covered by webhook.e2e-spec). */
export class RecordingWebhooks implements WebhookSender {
  readonly sent: (RunStopPayload | NeedsInputPayload)[] = [];

  wanted(): boolean {
    return true;
  }

  async deliver(_settings: unknown, payload: RunStopPayload | NeedsInputPayload): Promise<boolean> {
    this.sent.push(payload);
    return true;
  }
}
