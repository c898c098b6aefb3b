import { Inject, Injectable, type MessageEvent } from '@nestjs/common';
import * as fs from 'node:fs';
import { Observable, takeUntil } from 'rxjs';
import { CHANGE_FEED, ChangeFeed, fileSize } from '@app/storage';
import { SseChannel } from './channel';
import { RunLogHub } from './run-log-hub';
import { SseLifecycle } from './sse-lifecycle.service';
import { sseEvent } from './sse-event';

/**
 * #46 raw file tail (api.md §2.5): the whole current file as the first unnamed event, then each
 * appended chunk; `done` (`run completed` / `run failed`) once the run has ended and everything was
 * sent. Reads go through the shared FileTail of the file (one reader per file, D15).
 *
 * D15: every chunk carries `id: <byte offset after it>`; a reconnect with that `Last-Event-ID`
 * gets the bytes after it instead of the whole file again (upstream sends no ids).
 */
@Injectable()
export class FileStreamService {
  constructor(
    private readonly hub: RunLogHub,
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    private readonly lifecycle: SseLifecycle,
  ) {}

  stream(filePath: string, runInfoPath: string, signal?: AbortSignal, lastEventId?: string): Observable<MessageEvent> {
    const channel = new SseChannel(signal);
    const tail = this.hub.files.acquire(filePath);
    channel.onClose(() => this.hub.files.release(filePath));
    let finished = false;
    const checkDone = () => {
      if (finished || !fs.existsSync(filePath)) return;
      tail.poll();
      if (fileSize(filePath) > tail.offset) return;
      let status = '';
      try {
        status = this.hub.readInfo(runInfoPath).status;
      } catch {
        return;
      }
      if (status === 'completed' || status === 'failed') {
        finished = true;
        channel.push(sseEvent('done', `run ${status}`));
        channel.complete();
      }
    };
    const off = tail.on((chunk, truncated) => {
      if (chunk !== '' || truncated) channel.push(sseEvent(undefined, chunk, String(tail.offset)));
      checkDone();
    });
    channel.onClose(off);
    const head = tail.readHead(resumeOffset(lastEventId, tail.offset));
    if (head !== '') channel.push(sseEvent(undefined, head, String(tail.offset)));
    const stopWatch = this.feed.watch(runInfoPath, checkDone);
    channel.onClose(stopWatch);
    checkDone();
    return channel.asObservable().pipe(takeUntil(this.lifecycle.shutdown$));
  }
}

/** The byte offset a client already has (its Last-Event-ID), or 0 when absent, invalid or ahead of the file. */
function resumeOffset(lastEventId: string | undefined, size: number): number {
  const text = lastEventId?.trim() ?? '';
  if (!/^\d+$/.test(text)) return 0;
  const offset = Number(text);
  return offset <= size ? offset : 0;
}
