import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, describeError } from '../api/client';
import type { BusMessage } from '../api/types';
import { filterThreads, mergeMessages, messageTypes, threadMessages, type MessageThread } from '../data/messages';
import { useEventSource } from '../hooks/useEventSource';

const POST_TYPES = ['USER', 'QUESTION', 'ANSWER', 'INFO', 'FACT', 'USER_REQUEST', 'WARN'];
const MAX_THREADS_SHOWN = 300;

interface MessageBusProps {
  project: string;
  taskId?: string;
  /** Pins the scope (the run detail's messages tab); otherwise the user can switch. */
  fixedScope?: 'project' | 'task';
}

/** Live, threaded view of the project or task message bus with a compose form. */
export function MessageBus({ project, taskId, fixedScope }: MessageBusProps) {
  const [chosenScope, setChosenScope] = useState<'project' | 'task'>('project');
  const scope = fixedScope ?? (taskId ? chosenScope : 'project');
  const scopeTask = scope === 'task' ? taskId : undefined;
  const [messages, setMessages] = useState<BusMessage[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [typeFilter, setTypeFilter] = useState('');
  const scopeKey = `${project}/${scopeTask ?? ''}`;

  useEffect(() => {
    let cancelled = false;
    setMessages([]);
    setLoadError(null);
    api.messages(project, scopeTask).then(
      (list) => !cancelled && setMessages((prev) => mergeMessages(prev, list)),
      (err: unknown) => !cancelled && setLoadError(describeError(err)),
    );
    return () => {
      cancelled = true;
    };
  }, [project, scopeTask]);

  const state = useEventSource(api.streamUrl(api.messagesStreamPath(project, scopeTask)), {
    message: (data) => {
      try {
        const msg = JSON.parse(data) as BusMessage;
        setMessages((prev) => mergeMessages(prev, [msg]));
      } catch {
        /* a malformed event is skipped */
      }
    },
  });

  const threads = useMemo(() => filterThreads(threadMessages(messages), typeFilter).slice(-MAX_THREADS_SHOWN), [messages, typeFilter]);
  const types = useMemo(() => messageTypes(messages), [messages]);

  const listRef = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  useEffect(() => {
    const el = listRef.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [threads]);

  return (
    <section className="bus" aria-label="Message bus" data-scope={scopeKey}>
      <header className="bus-header">
        <h2>Message bus</h2>
        {!fixedScope && taskId && (
          <div className="scope" role="group" aria-label="Bus scope">
            <button className={scope === 'project' ? 'chip active' : 'chip'} aria-pressed={scope === 'project'} onClick={() => setChosenScope('project')}>
              project
            </button>
            <button className={scope === 'task' ? 'chip active' : 'chip'} aria-pressed={scope === 'task'} onClick={() => setChosenScope('task')}>
              task
            </button>
          </div>
        )}
        <select aria-label="Message type filter" value={typeFilter} onChange={(e) => setTypeFilter(e.target.value)}>
          <option value="">all types</option>
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <span className={`stream-state stream-${state}`}>{state === 'open' ? '● live' : state === 'reconnecting' ? 'reconnecting…' : 'connecting…'}</span>
      </header>
      <div
        className="bus-list"
        ref={listRef}
        role="log"
        aria-label={`Messages of ${scopeTask ? `task ${scopeTask}` : `project ${project}`}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          atEnd.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 20;
        }}
      >
        {loadError && <p className="empty">{loadError}</p>}
        {!loadError && threads.length === 0 && <p className="empty">No messages yet. Agents post progress here; you can post below.</p>}
        {threads.map((t) => (
          <ThreadView key={t.message.msg_id} thread={t} depth={0} />
        ))}
      </div>
      <ComposeForm project={project} taskId={scopeTask} onPosted={(m) => setMessages((prev) => mergeMessages(prev, [m]))} />
    </section>
  );
}

function ThreadView({ thread, depth }: { thread: MessageThread; depth: number }) {
  const m = thread.message;
  return (
    <div className="msg-thread" style={{ marginLeft: Math.min(depth, 6) * 14 }}>
      <article className={`msg msg-${(m.type ?? 'USER').toLowerCase()}`} data-msg-id={m.msg_id}>
        <div className="msg-head">
          <span className="msg-type">{m.type ?? 'USER'}</span>
          <time dateTime={m.timestamp}>{new Date(m.timestamp).toLocaleTimeString()}</time>
          {m.task_id && <span className="muted" title={m.task_id}>{shortTask(m.task_id)}</span>}
          {m.run_id && <span className="muted">run {m.run_id}</span>}
        </div>
        <MessageBody body={m.body} />
      </article>
      {thread.replies.map((r) => (
        <ThreadView key={r.message.msg_id} thread={r} depth={depth + 1} />
      ))}
    </div>
  );
}

const BODY_PREVIEW_LINES = 8;

/** Long bodies (completion facts, logs) are folded to a preview. */
function MessageBody({ body }: { body: string }) {
  const [open, setOpen] = useState(false);
  const lines = body.split('\n');
  if (lines.length <= BODY_PREVIEW_LINES) return <div className="msg-body">{body}</div>;
  return (
    <div className="msg-body">
      {open ? body : lines.slice(0, BODY_PREVIEW_LINES).join('\n')}
      <button className="link-button more" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'show less' : `show ${lines.length - BODY_PREVIEW_LINES} more lines`}
      </button>
    </div>
  );
}

function shortTask(id: string): string {
  return id.length > 28 ? `${id.slice(0, 26)}…` : id;
}

function ComposeForm({ project, taskId, onPosted }: { project: string; taskId?: string; onPosted: (m: BusMessage) => void }) {
  const [type, setType] = useState('USER');
  const [body, setBody] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!body.trim()) {
      setError('Write a message first.');
      return;
    }
    setSending(true);
    try {
      const res = await api.postMessage(project, taskId, type, body);
      onPosted({ msg_id: res.msg_id, timestamp: new Date().toISOString(), type, project_id: project, task_id: taskId, body });
      setBody('');
      setError(null);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setSending(false);
    }
  };

  return (
    <form className="compose" onSubmit={submit} aria-label="Post a message">
      <select aria-label="Message type" value={type} onChange={(e) => setType(e.target.value)}>
        {POST_TYPES.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <textarea
        aria-label="Message body"
        placeholder={`Message to the ${taskId ? 'task' : 'project'} bus`}
        value={body}
        rows={2}
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
        }}
      />
      <Button type="submit" primary disabled={sending}>
        Post
      </Button>
      {error && (
        <span className="form-error" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}
