import { hostname } from 'node:os';
import { Inject } from '@nestjs/common';
import { Command, Option } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { RunnerService } from '@app/runner';
import { STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { createWorker, resolveNatsAuth, ScaleoutError, validateHostId, validateNatsUrl, type NatsAuthFlags } from '@app/scaleout';
import { UsageError } from '../../common/cli-errors';
import { agentCallerEnv, loadRunConfig } from '../engine/job-common';
import { resolveRoot } from '../engine/support/runs-root';
import { durationFlag } from '../engine/support/options';
import { NatsAuthOptionParsers } from './nats-options';

interface WorkerFlags extends NatsAuthFlags {
  nats?: string;
  capacity?: string;
  root?: string;
  host?: string;
  lease?: string;
  restartDelay?: string;
  config?: string;
}

function defaultHost(): string {
  const h = hostname().toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'worker';
  return `${h}-${process.pid}`;
}

function usage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ScaleoutError) throw new UsageError(err.message);
    throw err;
  }
}

/** `run-agent worker --nats URL`: a worker host of the scale-out mode (docs/scale-out.md). */
@Command({
  name: 'worker',
  description: 'Run root tasks pulled from a conductor --nats work queue (NATS JetStream), replicating their files to the server',
})
export class WorkerCommand extends NatsAuthOptionParsers {
  constructor(
    private readonly runner: RunnerService,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_args: string[], flags: WorkerFlags): Promise<void> {
    if (!flags.nats) throw new UsageError('--nats is required (e.g. --nats nats://127.0.0.1:4222)');
    const url = usage(() => validateNatsUrl(flags.nats!));
    const auth = usage(() => resolveNatsAuth(flags));
    const host = usage(() => validateHostId(flags.host ?? defaultHost()));
    const capacity = flags.capacity === undefined ? 4 : Number(flags.capacity);
    if (!/^\d+$/.test(flags.capacity ?? '4') || capacity < 1) throw new UsageError(`invalid --capacity "${flags.capacity}": expected an integer ≥ 1`);
    const leaseMs = flags.lease === undefined ? undefined : durationFlag(flags.lease, '--lease');
    if (leaseMs !== undefined && leaseMs < 1000) throw new UsageError(`invalid --lease "${flags.lease}": must be at least 1s`);
    const restartDelayMs = flags.restartDelay === undefined ? undefined : durationFlag(flags.restartDelay, '--restart-delay');
    const loaded = loadRunConfig(flags.config);
    const root = resolveRoot(flags.root, process.env, flags.config);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const worker = createWorker({ url, layout: this.indexFor(root).layout, writers: this.bus.writers, host, capacity, leaseMs, config: loaded.config, task: { restartDelayMs, env: agentCallerEnv(loaded) }, log, runner: this.runner, auth });

    let stopRequested: (signal: string) => void = () => undefined;
    const stopped = new Promise<string>((resolve) => (stopRequested = resolve));
    process.on('SIGINT', stopRequested);
    process.on('SIGTERM', stopRequested);
    await worker.start();
    process.stdout.write(`worker ${host} pulling from ${url} (capacity ${capacity}); runs root ${root}\n`);
    const signal = await stopped;
    log(`received ${signal}: finishing running tasks`);
    await worker.stop();
  }

  @Option({ flags: '--nats <url>', description: 'NATS server with JetStream (required), e.g. nats://127.0.0.1:4222' })
  parseNats(value: string): string {
    return value;
  }

  @Option({ flags: '--capacity <n>', description: 'root tasks run at once (default 4)' })
  parseCapacity(value: string): string {
    return value;
  }

  @Option({ flags: '--root <dir>', description: "this host's runs root (default $CONDUCTOR_ROOT, storage.runs_dir, ~/.run-agent/runs)" })
  parseRoot(value: string): string {
    return value;
  }

  @Option({ flags: '--host <id>', description: 'worker id in subjects: lowercase letters, digits, hyphens (default <hostname>-<pid>)' })
  parseHost(value: string): string {
    return value;
  }

  @Option({ flags: '--lease <duration>', description: 'a task whose worker misses heartbeats this long moves to another worker; the lease is one for the whole cluster, set by the last worker given it (default: the queue’s, 30s for a new queue)' })
  parseLease(value: string): string {
    return value;
  }

  @Option({ flags: '--restart-delay <duration>', description: 'pause between attempts of a task (Go duration; default 1s)' })
  parseRestartDelay(value: string): string {
    return value;
  }

  @Option({ flags: '--config <path>', description: 'config file (default $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml)' })
  parseConfig(value: string): string {
    return value;
  }
}
