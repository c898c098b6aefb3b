import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import ButtonGroup from '@jetbrains/ring-ui-built/components/button-group/button-group';
import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import Input from '@jetbrains/ring-ui-built/components/input/input';
import { api, describeError } from '../api/client';
import type { BusMessage } from '../api/types';
import { filterThreads, messageTypes, shortenPaths, threadMessages, type MessageThread } from '../data/messages';
import { useBusMessages } from '../hooks/useBusMessages';
import { RingSelect } from '../ui/RingSelect';

const POST_TYPES = ['USER', 'QUESTION', 'ANSWER', 'INFO', 'FACT', 'USER_REQUEST', 'WARN'].map((value) => ({ value }));
const MAX_THREADS_SHOWN = 300;

export type BusScope = 'project' | 'task';

interface MessageBusProps {
  project: string;
  /** Absolute project root, when known: FACT paths are shown relative to it. */
  projectRoot?: string;
  /** The selected task; without one the scope is always the project. */
  taskId?: string;
  scope: BusScope;
  onScopeChange: (scope: BusScope) => void;
}

/** The one message bus panel: live threads of the project or the selected task, and one compose box. */
export function MessageBus({ project, projectRoot, taskId, scope: wanted, onScopeChange }: MessageBusProps) {
  const scope: BusScope = taskId ? wanted : 'project';
  const scopeTask = scope === 'task' ? taskId : undefined;
  const { messages, loadError, state, add } = useBusMessages(api, project, scopeTask);
  const [typeFilter, setTypeFilter] = useState('');
  const scopeKey = `${project}/${scopeTask ?? ''}`;

  const threads = useMemo(() => filterThreads(threadMessages(messages), typeFilter).slice(-MAX_THREADS_SHOWN), [messages, typeFilter]);
  const types = useMemo(() => [{ value: '', label: 'all types' }, ...messageTypes(messages).map((value) => ({ value }))], [messages]);

  const listRef = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  useEffect(() => {
    const el = listRef.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [threads]);

  const scopeName = scopeTask ? `task ${scopeTask}` : `project ${project}`;
  return (
    <Island className="panel bus" aria-label="Message bus" data-scope={scopeKey} role="region">
      <IslandHeader border wrapWithTitle={false} className="panel-header bus-header">
        <h2 className="panel-title">Message bus</h2>
        <ButtonGroup className="scope" role="group" aria-label="Bus scope">
          <Button active={scope === 'project'} aria-pressed={scope === 'project'} onClick={() => onScopeChange('project')}>
            Project
          </Button>
          <Button active={scope === 'task'} aria-pressed={scope === 'task'} disabled={!taskId} onClick={() => onScopeChange('task')}>
            Task
          </Button>
        </ButtonGroup>
        <span className="bus-scope-name" title={scopeName}>
          {scopeName}
        </span>
        <RingSelect label="Message type filter" value={typeFilter} options={types} onChange={setTypeFilter} />
        <span className={`stream-state stream-${state}`}>{state === 'open' ? '● live' : state === 'reconnecting' ? 'reconnecting…' : 'connecting…'}</span>
      </IslandHeader>
      <div
        className="bus-list"
        ref={listRef}
        role="log"
        tabIndex={0}
        aria-label={`Messages of ${scopeName}`}
        onScroll={(e) => {
          const el = e.currentTarget;
          atEnd.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 20;
        }}
      >
        {loadError && <p className="empty">{loadError}</p>}
        {!loadError && threads.length === 0 && <p className="empty">No messages yet. Agents post progress here; you can post below.</p>}
        {threads.map((t) => (
          <ThreadView key={t.message.msg_id} thread={t} depth={0} project={project} projectRoot={projectRoot} />
        ))}
      </div>
      <ComposeForm project={project} taskId={scopeTask} scopeName={scopeName} onPosted={(m) => add([m])} />
    </Island>
  );
}

function ThreadView({ thread, depth, project, projectRoot }: { thread: MessageThread; depth: number; project: string; projectRoot?: string }) {
  const m = thread.message;
  const type = m.type ?? 'USER';
  // FACT (and run event) bodies list absolute paths; they read better relative to the project.
  const body = shortenPaths(m.body, project, projectRoot);
  return (
    <div className="msg-thread" style={{ marginLeft: Math.min(depth, 6) * 14 }}>
      <article className={`msg msg-${type.toLowerCase()}`} data-msg-id={m.msg_id}>
        <div className="msg-head">
          <span className="msg-type">{type}</span>
          <time dateTime={m.timestamp}>{new Date(m.timestamp).toLocaleTimeString()}</time>
          {m.task_id && (
            <span className="muted" title={m.task_id}>
              {shortTask(m.task_id)}
            </span>
          )}
          {m.run_id && <span className="muted">run {m.run_id}</span>}
        </div>
        <MessageBody body={body} />
      </article>
      {thread.replies.map((r) => (
        <ThreadView key={r.message.msg_id} thread={r} depth={depth + 1} project={project} projectRoot={projectRoot} />
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
      <Button inline className="more" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'show less' : `show ${lines.length - BODY_PREVIEW_LINES} more lines`}
      </Button>
    </div>
  );
}

function shortTask(id: string): string {
  return id.length > 28 ? `${id.slice(0, 26)}…` : id;
}

function ComposeForm({ project, taskId, scopeName, onPosted }: { project: string; taskId?: string; scopeName: string; onPosted: (m: BusMessage) => void }) {
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
      <RingSelect label="Message type" value={type} options={POST_TYPES} onChange={setType} />
      <Input
        multiline
        className="compose-body"
        aria-label="Message body"
        placeholder={`Message to the ${scopeName} bus (Ctrl+Enter posts)`}
        value={body}
        rows={2}
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
        }}
      />
      <Button type="submit" primary disabled={sending}>
        Post to {taskId ? 'task' : 'project'}
      </Button>
      {error && (
        <span className="form-error" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}
