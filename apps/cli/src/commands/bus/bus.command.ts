import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { MessageBusService } from '@app/messagebus';
import { CHANGE_FEED, type ChangeFeed, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import {
  BUS_DISCOVER_FLAGS,
  BUS_POST_FLAGS,
  BUS_READ_FLAGS,
  BUS_REPAIR_FLAGS,
  type BusDiscoverOptions,
  type BusPostOptions,
  type BusReadOptions,
  type BusRepairOptions,
} from './bus-flags';
import { runBusRepair } from './bus-repair';
import { runBusDiscover } from './bus-discover';
import { readStdinIfPiped, runBusPost } from './bus-post';
import { runBusRead } from './bus-read';
import { runBusResume } from './bus-resume';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
const asIs = (value: string): string => value;

/** Resolves on the first SIGINT/SIGTERM (ends `bus read --follow`). */
function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}

// `bus post` normally runs on the fast path (apps/cli/src/fast-path.ts); this class serves
// `--help` and keeps the command tree complete.
@SubCommand({ name: 'post', description: 'Post a message to the message bus (prints msg_id: <id>)' })
export class BusPostCommand extends CommandRunner {
  constructor(
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_params: string[], options: BusPostOptions = {}): Promise<void> {
    const io = { env: process.env, cwd: process.cwd(), stdout: process.stdout, readStdin: readStdinIfPiped };
    if (options.resume) return runBusResume(options, io, { indexFor: this.indexFor, writers: this.bus.writers });
    await runBusPost(options, io);
  }

  @Option(BUS_POST_FLAGS.root) root(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.config) config(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.type) type(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.project) project(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.task) task(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.run) runId(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.body) body(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.maxBodyBytes) maxBodyBytes(v: string) { return asIs(v); }
  @Option(BUS_POST_FLAGS.allowEmpty) allowEmpty() { return true; }
  @Option(BUS_POST_FLAGS.parent) parent(v: string, prev?: string[]) { return collect(v, prev); }
  @Option(BUS_POST_FLAGS.link) link(v: string, prev?: string[]) { return collect(v, prev); }
  @Option(BUS_POST_FLAGS.resume) resume() { return true; }
}

@SubCommand({ name: 'read', description: 'Print messages of the message bus' })
export class BusReadCommand extends CommandRunner {
  constructor(@Inject(CHANGE_FEED) private readonly feed: ChangeFeed) {
    super();
  }

  async run(_params: string[], options: BusReadOptions = {}): Promise<void> {
    await runBusRead(options, {
      env: process.env,
      cwd: process.cwd(),
      stdout: process.stdout,
      follow: options.follow ? { feed: this.feed, until: untilInterrupted() } : undefined,
    });
  }

  @Option(BUS_READ_FLAGS.root) root(v: string) { return asIs(v); }
  @Option(BUS_READ_FLAGS.config) config(v: string) { return asIs(v); }
  @Option(BUS_READ_FLAGS.project) project(v: string) { return asIs(v); }
  @Option(BUS_READ_FLAGS.task) task(v: string) { return asIs(v); }
  @Option(BUS_READ_FLAGS.tail) tail(v: string) { return asIs(v); }
  @Option(BUS_READ_FLAGS.since) since(v: string) { return asIs(v); }
  @Option(BUS_READ_FLAGS.follow) follow() { return true; }
  @Option(BUS_READ_FLAGS.json) json() { return true; }
}

@SubCommand({ name: 'repair', description: 'Report records lacking their terminator and remove an unfinished final record' })
export class BusRepairCommand extends CommandRunner {
  async run(_params: string[], options: BusRepairOptions = {}): Promise<void> {
    await runBusRepair(options, { env: process.env, cwd: process.cwd(), stdout: process.stdout });
  }

  @Option(BUS_REPAIR_FLAGS.root) root(v: string) { return asIs(v); }
  @Option(BUS_REPAIR_FLAGS.project) project(v: string) { return asIs(v); }
  @Option(BUS_REPAIR_FLAGS.task) task(v: string) { return asIs(v); }
}

@SubCommand({ name: 'discover', description: 'Print the nearest message bus file, searching upward' })
export class BusDiscoverCommand extends CommandRunner {
  async run(_params: string[], options: BusDiscoverOptions = {}): Promise<void> {
    runBusDiscover(options, { cwd: process.cwd(), stdout: process.stdout });
  }

  @Option(BUS_DISCOVER_FLAGS.from) from(v: string) { return asIs(v); }
}

@Command({ name: 'bus', description: 'Read and post messages to the message bus', subCommands: [BusPostCommand, BusReadCommand, BusRepairCommand, BusDiscoverCommand] })
export class BusCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
