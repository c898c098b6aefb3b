import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, describeError } from '../api/client';
import { AgentLogModel, entriesToRows } from '../data/agentstream';
import { closeSource, useEventSource } from '../hooks/useEventSource';
import { VirtualList } from './VirtualList';

const LINE_HEIGHT = 18;

interface LogViewProps {
  project: string;
  task: string;
  run: string;
  /** File name for the run file API: stdout, stderr, output.md, prompt. */
  name: string;
  live: boolean;
  /** Render agent JSON streams (stdout); other files are shown as plain text. */
  render: boolean;
  onOutput?: (runId: string) => void;
  onFinished?: () => void;
}

/**
 * One run file: fetched once when the run has ended, tailed over SSE while it runs (the first
 * chunk is the whole file so far). Long logs are windowed; the view follows new output until
 * the user scrolls up.
 */
export function LogView({ project, task, run, name, live, render, onOutput, onFinished }: LogViewProps) {
  const model = useMemo(() => new AgentLogModel(), []);
  const [version, setVersion] = useState(0);
  const [unfolded, setUnfolded] = useState<ReadonlySet<number>>(() => new Set());
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [streaming, setStreaming] = useState(live);
  const [loading, setLoading] = useState(!live);
  const frame = useRef(0);

  const bump = useCallback(() => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setVersion((v) => v + 1);
    });
  }, []);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);

  // Reset whenever the file changes.
  useEffect(() => {
    model.reset();
    setUnfolded(new Set());
    setFollow(true);
    setError(null);
    setStreaming(live);
    bump();
  }, [project, task, run, name]);

  // Follow the run's state: a run that ended without our seeing `done` is fetched instead.
  useEffect(() => setStreaming(live), [live]);

  // Finished runs: one fetch.
  useEffect(() => {
    if (streaming) return;
    let cancelled = false;
    setLoading(true);
    api.runFile(project, task, run, name).then(
      (file) => {
        if (cancelled) return;
        model.reset();
        model.append(file.content);
        model.flush();
        setError(null);
        setLoading(false);
        bump();
      },
      (err: unknown) => {
        if (cancelled) return;
        setError(describeError(err));
        setLoading(false);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [project, task, run, name, streaming, model, bump]);

  const url = streaming ? api.streamUrl(api.runStreamPath(project, task, run, name)) : null;
  const state = useEventSource(
    url,
    {
      message: (data) => {
        model.append(data);
        onOutput?.(run);
        bump();
      },
      done: (_data, ev) => {
        closeSource(ev);
        setStreaming(false);
        onFinished?.();
      },
    },
    (fresh) => {
      // A new connection starts again from byte 0 of the file; a resumed one (Last-Event-ID =
      // byte offset) continues after what we already have.
      if (!fresh) return;
      model.reset();
      bump();
    },
  );

  const rows = useMemo(() => {
    const out = render ? entriesToRows(model.entries, unfolded) : entriesToRows(model.entries.map((e) => ({ kind: 'raw' as const, text: e.text })), unfolded);
    if (model.pending) out.push({ key: 'pending', entry: -1, kind: 'raw', text: model.pending });
    return out;
    // version tracks model mutations
  }, [version, unfolded, render, model]);

  const toggleFold = (entry: number) =>
    setUnfolded((prev) => {
      const next = new Set(prev);
      if (next.has(entry)) next.delete(entry);
      else next.add(entry);
      return next;
    });

  const renderRow = (i: number) => {
    const row = rows[i];
    return (
      <div key={row.key} className={`log-line log-${row.kind}`}>
        {row.fold ? (
          <button className="fold" onClick={() => toggleFold(row.entry)} aria-expanded={row.fold === 'expanded'}>
            {row.text}
          </button>
        ) : (
          row.text || '\u00a0'
        )}
      </div>
    );
  };

  return (
    <div className="log-view">
      <div className="log-status">
        {streaming ? (
          <span className={`stream-state stream-${state}`}>
            {state === 'open' ? '● live' : state === 'reconnecting' ? 'stream reconnecting…' : 'connecting…'}
          </span>
        ) : (
          <span className="stream-state">{loading ? 'loading…' : `${rows.length} lines`}</span>
        )}
        {!follow && (
          <Button inline onClick={() => setFollow(true)}>
            Jump to latest ↓
          </Button>
        )}
      </div>
      {error ? (
        <p className="empty">{error.includes('not found') ? `No ${name} yet for this run.` : error}</p>
      ) : rows.length === 0 ? (
        <p className="empty">{streaming ? 'Waiting for output…' : loading ? 'Loading…' : `${name} is empty.`}</p>
      ) : (
        <VirtualList count={rows.length} rowHeight={LINE_HEIGHT} renderRow={renderRow} follow={follow} onFollowChange={setFollow} className="log" ariaLabel="Live" role="log" />
      )}
    </div>
  );
}
