import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import { api, AuthRequiredError, describeError, ServerDownError } from './api/client';
import type { FlatRun } from './api/types';
import { heartbeatColour } from './data/heartbeat';
import { compareRuns, parseTimeOrZero, runDisplayStatus } from './data/status';
import { formatDuration } from './data/time';
import { buildTaskTree, findTask } from './data/tree';
import { useClock } from './hooks/useClock';
import { useEventSource } from './hooks/useEventSource';
import { usePoll } from './hooks/usePoll';
import { KeyPrompt } from './components/KeyPrompt';
import { MessageBus } from './components/MessageBus';
import { NewTaskDialog } from './components/NewTaskDialog';
import { OpenQuestionsPanel, TaskInputBanner } from './components/NeedsInput';
import { ProjectList, StatsCards } from './components/ProjectPanel';
import { RunDetail } from './components/RunDetail';
import { TaskTree } from './components/TaskTree';
import { UsagePanel } from './components/UsagePanel';

interface Toast {
  id: number;
  text: string;
  error: boolean;
}

interface StatusEvent {
  run_id: string;
  status: string;
  exit_code: number;
}

export function App() {
  const [epoch, setEpoch] = useState(0);
  const [authNeeded, setAuthNeeded] = useState(false);
  const [keyRejected, setKeyRejected] = useState(false);
  useEffect(
    () =>
      api.onAuthRequired(() => {
        setKeyRejected(api.apiKey !== null);
        setAuthNeeded(true);
      }),
    [],
  );

  const version = usePoll(`v${epoch}`, () => api.version(), 0);
  const projects = usePoll(`projects:${epoch}`, () => api.projects(), 5000);
  const [selectedProject, setSelectedProject] = useState<string | undefined>(() => urlParam('project'));
  const project = selectedProject ?? projects.data?.[0]?.id;

  const stats = usePoll(project ? `${project}:${epoch}` : null, () => api.stats(project!), 10000);
  const runsPoll = usePoll(project ? `${project}:${epoch}` : null, () => api.flatRuns(project!), 2500);
  const tasksPoll = usePoll(project ? `${project}:${epoch}` : null, () => api.tasks(project!), 5000);

  // Live status from the all-runs stream patches the polled list between polls.
  const [patches, setPatches] = useState<ReadonlyMap<string, StatusEvent>>(new Map());
  useEffect(() => setPatches(new Map()), [runsPoll.data]);
  const lastOutput = useRef(new Map<string, number>());
  const reloadRuns = runsPoll.reload;
  const unknownRunReload = useRef(0);
  const knownRuns = useRef(new Set<string>());
  const runs: FlatRun[] = useMemo(() => {
    const base = runsPoll.data ?? [];
    knownRuns.current = new Set(base.map((r) => r.id));
    // `status` becomes what to show: the added display_status (stopped, cancelled) unless a newer
    // stream event changed the run since the poll.
    return base.map((r) => {
      const p = patches.get(r.id);
      const patched = p && (p.status !== r.status || p.exit_code !== r.exit_code) ? { ...r, status: p.status, exit_code: p.exit_code, display_status: undefined } : r;
      return { ...patched, status: runDisplayStatus(patched) };
    });
  }, [runsPoll.data, patches]);

  const maybeReloadForUnknown = useCallback(
    (runId: string) => {
      if (knownRuns.current.has(runId)) return;
      const now = Date.now();
      if (now - unknownRunReload.current < 1000) return;
      unknownRunReload.current = now;
      reloadRuns();
    },
    [reloadRuns],
  );

  useEventSource(project && !authNeeded ? api.streamUrl('/api/v1/runs/stream/all') : null, {
    status: (data) => {
      try {
        const ev = JSON.parse(data) as StatusEvent;
        if (!ev.run_id) return;
        setPatches((prev) => new Map(prev).set(ev.run_id, ev));
        maybeReloadForUnknown(ev.run_id);
      } catch {
        /* skip malformed event */
      }
    },
    log: (data) => {
      try {
        const ev = JSON.parse(data) as { run_id?: string };
        if (!ev.run_id) return;
        lastOutput.current.set(ev.run_id, Date.now());
        maybeReloadForUnknown(ev.run_id);
      } catch {
        /* skip malformed event */
      }
    },
  });
  const noteOutput = useCallback((runId: string) => lastOutput.current.set(runId, Date.now()), []);
  const now = useClock(2000);

  const [selection, setSelection] = useState<{ task?: string; run?: string }>(() => ({ task: urlParam('task') }));
  const questionsPoll = usePoll(`questions:${epoch}`, () => api.openQuestions(), 3000);
  const questions = questionsPoll.data ?? [];
  const tree = useMemo(() => buildTaskTree(runs, tasksPoll.data ?? []), [runs, tasksPoll.data]);
  const selectedTask = selection.task ? findTask(tree, selection.task) : undefined;
  const selectedRun = useMemo(() => {
    if (!selectedTask) return undefined;
    if (selection.run) return selectedTask.runs.find((r) => r.id === selection.run);
    return [...selectedTask.runs].sort(compareRuns).at(-1);
  }, [selectedTask, selection.run]);

  const selectTask = useCallback((task: string) => setSelection({ task }), []);
  const selectRun = useCallback((task: string, run: string) => setSelection({ task, run }), []);

  const [toasts, setToasts] = useState<Toast[]>([]);
  const notify = useCallback((text: string, error = false) => {
    const id = Date.now() + Math.random();
    setToasts((t) => [...t.slice(-3), { id, text, error }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), error ? 8000 : 4000);
  }, []);

  const [creating, setCreating] = useState(false);
  const refreshAll = useCallback(() => {
    runsPoll.reload();
    tasksPoll.reload();
    stats.reload();
    projects.reload();
  }, [runsPoll, tasksPoll, stats, projects]);

  const serverDown = projects.error instanceof ServerDownError;
  const projectList = projects.data ?? [];

  return (
    <div className="app">
      <header className="topbar">
        <h1>Conductor</h1>
        <span className="muted">{version.data ? (/^\d/.test(version.data.version) ? `v${version.data.version}` : version.data.version) : ''}</span>
        <div className="spacer" />
        {api.apiKey && (
          <button
            className="link-button"
            onClick={() => {
              api.setApiKey(null);
              setEpoch((e) => e + 1);
            }}
          >
            Forget API key
          </button>
        )}
        <Button primary onClick={() => setCreating(true)}>
          New task
        </Button>
      </header>
      {serverDown && (
        <div className="banner banner-error" role="alert">
          Cannot reach the conductor server. Is <code>conductor</code> running? Retrying every few seconds…
        </div>
      )}
      {projects.error !== undefined && !serverDown && !(projects.error instanceof AuthRequiredError) && (
        <div className="banner banner-error" role="alert">
          {describeError(projects.error)}
        </div>
      )}
      {projects.data && projectList.length === 0 ? (
        <main className="empty-state">
          <h2>No projects yet</h2>
          <p>
            Start a task with <strong>New task</strong> (choose a project name, an agent and a prompt), or from a terminal:
          </p>
          <pre>run-agent task --project my-project --agent claude --prompt "Describe the work"</pre>
          <p>Projects appear here as soon as their first run starts.</p>
        </main>
      ) : (
        <main className="layout">
          <aside className="left">
            <ProjectList
              projects={projectList}
              selected={project}
              onSelect={(id) => {
                if (id !== project) setSelection({});
                setSelectedProject(id);
              }}
            />
            <OpenQuestionsPanel
              questions={questions}
              notify={notify}
              onAnswered={() => {
                questionsPoll.reload();
                refreshAll();
              }}
              onSelect={(p, t) => {
                setSelectedProject(p);
                setSelection({ task: t });
              }}
            />
            <StatsCards stats={stats.data} runs={runs} />
            {project && (
              <TaskTree
                runs={runs}
                tasks={tasksPoll.data ?? []}
                selectedTaskId={selection.task}
                selectedRunId={selectedRun && selection.task ? selectedRun.id : undefined}
                lastOutput={lastOutput.current}
                now={now}
                onSelectTask={selectTask}
                onSelectRun={selectRun}
              />
            )}
          </aside>
          <section className="right">
            {project && <MessageBus key={`${project}`} project={project} taskId={selection.task} />}
            {project && selection.task && (
              <UsagePanel key={`${project}/${selection.task}`} project={project} task={selection.task} item={tasksPoll.data?.find((t) => t.id === selection.task)} notify={notify} onChange={refreshAll} />
            )}
            {project && selection.task && (
              <TaskInputBanner
                questions={questions.filter((q) => q.project_id === project && q.task_id === selection.task)}
                stalled={!!tasksPoll.data?.find((t) => t.id === selection.task)?.stalled}
                notify={notify}
                onAnswered={() => {
                  questionsPoll.reload();
                  refreshAll();
                }}
              />
            )}
            {project && selection.task ? (
              <RunDetail
                project={project}
                taskId={selection.task}
                run={selectedRun}
                taskStatus={selectedTask?.status ?? 'idle'}
                taskDone={selectedTask?.done ?? false}
                heartbeat={selectedRun ? runHeartbeat(selectedRun, lastOutput.current, now) : undefined}
                onOutput={noteOutput}
                onChanged={refreshAll}
                notify={notify}
              />
            ) : (
              <section className="detail empty-detail">
                <p className="empty">{projects.loading ? 'Loading…' : 'Select a task or a run in the tree to see its output.'}</p>
              </section>
            )}
          </section>
        </main>
      )}
      {creating && (
        <NewTaskDialog
          defaultProject={project}
          defaultAgent={runs.at(-1)?.agent_name || runs.at(-1)?.agent}
          onClose={() => setCreating(false)}
          onCreated={(p, t, r) => {
            setCreating(false);
            setSelectedProject(p);
            setSelection({ task: t });
            notify(`Task ${t} started (run ${r})`);
            refreshAll();
          }}
        />
      )}
      {authNeeded && (
        <KeyPrompt
          rejected={keyRejected}
          onSubmit={(key) => {
            api.setApiKey(key);
            setAuthNeeded(false);
            setEpoch((e) => e + 1);
          }}
        />
      )}
      <div className="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} className={t.error ? 'toast toast-error' : 'toast'} role={t.error ? 'alert' : 'status'}>
            {t.text}
          </div>
        ))}
      </div>
    </div>
  );
}

/** `?project=…&task=…` (the link of the needs_input webhook) preselects a task. */
function urlParam(name: string): string | undefined {
  return new URLSearchParams(globalThis.location?.search ?? '').get(name) || undefined;
}

function runHeartbeat(run: FlatRun, lastOutput: ReadonlyMap<string, number>, now: number) {
  const last = Math.max(lastOutput.get(run.id) ?? 0, parseTimeOrZero(run.start_time));
  return { colour: heartbeatColour(last, now), age: formatDuration(now - last) };
}
