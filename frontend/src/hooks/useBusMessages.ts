import { useEffect, useRef, useState } from 'react';
import { describeError, type ApiClient } from '../api/client';
import type { BusMessage } from '../api/types';
import { mergeMessages } from '../data/messages';
import { useEventSource, type StreamState } from './useEventSource';

export interface BusMessages {
  messages: BusMessage[];
  loadError: string | null;
  state: StreamState;
  /** Adds messages the UI itself posted (the stream brings them too; duplicates are kept once). */
  add(messages: BusMessage[]): void;
}

/**
 * The messages of a project or task bus: the list (GET), then the live stream. When the server
 * cannot resume the stream after the browser's Last-Event-ID (the bus was rotated or replaced) it
 * sends `resync`: the list is fetched again and replaces what was shown, together with whatever the
 * stream delivered since, so no gap is left and nothing the server no longer has stays on screen.
 */
export function useBusMessages(client: ApiClient, project: string, task: string | undefined): BusMessages {
  const [messages, setMessages] = useState<BusMessage[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  // messages streamed since the last resync started: kept when its list replaces the shown ones
  const sinceResync = useRef<BusMessage[] | null>(null);
  const generation = useRef(0);
  // a key entered after a 401 loads the list again (no stale "needs an API key" notice)
  const [keyEpoch, setKeyEpoch] = useState(0);
  useEffect(() => client.onKeyChange(() => setKeyEpoch((e) => e + 1)), [client]);

  useEffect(() => {
    let cancelled = false;
    generation.current++;
    sinceResync.current = null;
    setMessages([]);
    setLoadError(null);
    client.messages(project, task).then(
      (list) => !cancelled && setMessages((prev) => mergeMessages(prev, list)),
      (err: unknown) => !cancelled && setLoadError(describeError(err)),
    );
    return () => {
      cancelled = true;
    };
  }, [client, project, task, keyEpoch]);

  // A new EventSource (after the browser gave up on one) resumes from nothing: the server sends the
  // last messages only, so it is re-listed like a resync; the first one runs beside the GET above.
  const onOpen = (fresh: boolean, connection: number): void => {
    if (fresh && connection > 1) relist();
  };

  const relist = (): void => {
    const mine = ++generation.current;
    const streamed: BusMessage[] = [];
    sinceResync.current = streamed;
    client.messages(project, task).then(
      (list) => {
        if (generation.current !== mine) return;
        sinceResync.current = null;
        setLoadError(null);
        setMessages(mergeMessages(list, streamed));
      },
      (err: unknown) => generation.current === mine && setLoadError(describeError(err)),
    );
  };

  const state = useEventSource(client.streamUrl(client.messagesStreamPath(project, task)), {
    message: (data) => {
      let msg: BusMessage;
      try {
        msg = JSON.parse(data) as BusMessage;
      } catch {
        return; // a malformed event is skipped
      }
      sinceResync.current?.push(msg);
      setMessages((prev) => mergeMessages(prev, [msg]));
    },
    resync: relist,
  }, onOpen);

  return { messages, loadError, state, add: (more) => setMessages((prev) => mergeMessages(prev, more)) };
}
