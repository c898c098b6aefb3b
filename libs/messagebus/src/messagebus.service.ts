import { Inject, Injectable, Optional } from '@nestjs/common';
import { CHANGE_FEED, type ChangeFeed } from '@app/storage';
import { followBus, FollowOptions } from './follow';
import { readMessages } from './reader';
import { MAX_BODY_BYTES, type BusMessage } from './types';
import { createBusWriters, type BusWriters } from './bus-writers';
import type { BusWriter, BusWriterOptions } from './writer';

export const MESSAGEBUS_OPTIONS = Symbol('MESSAGEBUS_OPTIONS');

/** Settings every writer of the app gets (config: message body limit, lock timeout). */
export type MessageBusModuleOptions = BusWriterOptions;

/**
 * The app's door to the bus files: writers with the configured options, and follows that share
 * the injected ChangeFeed (one watcher per directory for the whole process).
 */
@Injectable()
export class MessageBusService {
  /** The bus-writer factory with the app's settings: hand it down to the parts that write a bus. */
  readonly writers: BusWriters;
  /**
   * The same for the orchestrator's own records (RUN_START, criteria failures with output tails,
   * completion facts, notices): the configured body limit is one on posts, not on these, which
   * keep the built-in limit.
   */
  readonly systemWriters: BusWriters;

  constructor(
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    @Optional() @Inject(MESSAGEBUS_OPTIONS) options: MessageBusModuleOptions = {},
  ) {
    this.writers = createBusWriters(options);
    this.systemWriters = createBusWriters({ ...options, maxBodyBytes: MAX_BODY_BYTES });
  }

  writer(path: string, overrides: BusWriterOptions = {}): BusWriter {
    return this.writers(path, overrides);
  }

  read(path: string, opts?: { sinceId?: string; last?: number }): BusMessage[] {
    return readMessages(path, opts);
  }

  follow(path: string, opts: Omit<FollowOptions, 'feed'>, onMessages: (m: BusMessage[]) => void): () => void {
    return followBus(path, { ...opts, feed: this.feed }, onMessages);
  }
}
