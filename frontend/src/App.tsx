import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ThemeProvider } from '@jetbrains/ring-ui-built/components/global/theme';
import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import LoaderInline from '@jetbrains/ring-ui-built/components/loader-inline/loader-inline';
import { api, AuthRequiredError, describeError, ServerDownError } from './api/client';
import type { FlatRun } from './api/types';
import { heartbeatColour } from './data/heartbeat';
import { parseTimeOrZero, runDisplayStatus } from './data/status';
import { formatDuration } from './data/time';
import { buildTaskTree, countTasks, findTask, pickRun } from './data/tree';
import { useClock } from './hooks/useClock';
import { useEventSource } from './hooks/useEventSource';
import { usePoll } from './hooks/usePoll';
import { useRoute } from './hooks/useRoute';
import { useThemeChoice } from './ui/theme';
import { AppHeader } from './components/AppHeader';
import { Banner } from './components/Banner';
import { MessageBus, type BusScope } from './components/MessageBus';
import { OpenQuestionsPanel, TaskInputBanner } from './components/NeedsInput';
import { ProjectList, StatsCards } from './components/ProjectPanel';
import { TaskTree } from './components/TaskTree';
import { Toasts, useToasts } from './components/Toasts';
import { UsagePanel } from './components/UsagePanel';
import { SchedulesPanel } from './components/SchedulesPanel';

// Loaded on first use, so the first paint of the overview (the bench's tree render) parses less.
const RunDetail = lazy(() => import('./components/RunDetail').then((m) => ({ default: m.RunDetail })));
const NewTaskDialog = lazy(() => import('./components/NewTaskDialog').then((m) => ({ default: m.NewTaskDialog })));
const KeyPrompt = lazy(() => import('./components/KeyPrompt').then((m) => ({ default: m.KeyPrompt })));

interface StatusEvent {
  run_id: string;
  status: string;
  exit_code: number;
}

export function App() {
  const [theme, toggleTheme] = useThemeChoice();
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
  const [route, navigate] = useRoute();
  const project = route.project ?? projects.data?.[0]?.id;

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

  const taskId = route.project === project ? route.task : undefined;
  const questionsPoll = usePoll(`questions:${epoch}`, () => api.openQuestions(), 3000);
  const questions = questionsPoll.data ?? [];
  const tree = useMemo(() => buildTaskTree(runs, tasksPoll.data ?? []), [runs, tasksPoll.data]);
  const taskTotal = useMemo(() => countTasks(tree), [tree]);
  const selectedTask = taskId ? findTask(tree, taskId) : undefined;
  const selectedRun = useMemo(() => pickRun(selectedTask, route.run), [selectedTask, route.run]);

  const selectTask = useCallback((task: string) => navigate({ project, task }), [navigate, project]);
  const selectRun = useCallback((task: string, run: string) => navigate({ project, task, run }), [navigate, project]);

  // One bus panel; its scope follows the selection (task when one is selected) and can be switched.
  const [busScope, setBusScope] = useState<BusScope>(taskId ? 'task' : 'project');
  useEffect(() => setBusScope(taskId ? 'task' : 'project'), [project, taskId]);

  const [toasts, notify, dismiss] = useToasts();
  const [creating, setCreating] = useState(false);
  const refreshAll = useCallback(() => {
    runsPoll.reload();
    tasksPoll.reload();
    stats.reload();
    projects.reload();
  }, [runsPoll, tasksPoll, stats, projects]);
  const schedulesPoll = usePoll(`schedules:${epoch}`, () => api.schedules(), 5000);
  const schedules = (
    <SchedulesPanel
      schedules={schedulesPoll.data ?? []}
      now={now}
      notify={notify}
      onFired={() => {
        schedulesPoll.reload();
        refreshAll();
      }}
      onSelect={(p, t) => navigate({ project: p, task: t })}
    />
  );

  const serverDown = projects.error instanceof ServerDownError;
  const projectList = projects.data ?? [];

  return (
    <ThemeProvider theme={theme} className="app" passToPopups>
      <AppHeader
        version={version.data?.version}
        theme={theme}
        onToggleTheme={toggleTheme}
        hasApiKey={!!api.apiKey}
        onForgetKey={() => {
          api.setApiKey(null);
          setEpoch((e) => e + 1);
        }}
        onNewTask={() => setCreating(true)}
      />
      {serverDown && (
        <Banner tone="error">
          Cannot reach the conductor server. Is <code>conductor</code> running? Retrying every few seconds…
        </Banner>
      )}
      {projects.error !== undefined && !serverDown && !(projects.error instanceof AuthRequiredError) && <Banner tone="error">{describeError(projects.error)}</Banner>}
      {projects.data && projectList.length === 0 ? (
        <main className="empty-state">
          <Island className="empty-island">
            <h2>No projects yet</h2>
            <p>
              Start a task with <strong>New task</strong> (choose a project name, an agent and a prompt), or from a terminal:
            </p>
            <pre>run-agent task --project my-project --agent claude --prompt "Describe the work"</pre>
            <p>Projects appear here as soon as their first run starts.</p>
          </Island>
          {schedules}
        </main>
      ) : (
        <main className="layout">
          <aside className="left" aria-label="Project overview">
            <ProjectList
              projects={projectList}
              selected={project}
              selectedTaskCount={taskTotal}
              onSelect={(id) => navigate(id === project ? { project: id, task: taskId, run: route.run } : { project: id })}
            />
            <OpenQuestionsPanel
              questions={questions}
              notify={notify}
              onAnswered={() => {
                questionsPoll.reload();
                refreshAll();
              }}
              onSelect={(p, t) => navigate({ project: p, task: t })}
            />
            {schedules}
            <StatsCards stats={stats.data} runs={runs} tasks={tasksPoll.data ? taskTotal : undefined} />
            {project && taskId && (
              <UsagePanel key={`${project}/${taskId}`} project={project} task={taskId} item={tasksPoll.data?.find((t) => t.id === taskId)} notify={notify} onChange={refreshAll} />
            )}
            {project && (
              <TaskTree
                runs={runs}
                tasks={tasksPoll.data ?? []}
                selectedTaskId={taskId}
                selectedRunId={selectedRun && taskId ? selectedRun.id : undefined}
                lastOutput={lastOutput.current}
                now={now}
                onSelectTask={selectTask}
                onSelectRun={selectRun}
              />
            )}
          </aside>
          <section className="right">
            {project && taskId && (
              <TaskInputBanner
                questions={questions.filter((q) => q.project_id === project && q.task_id === taskId)}
                stalled={!!tasksPoll.data?.find((t) => t.id === taskId)?.stalled}
                notify={notify}
                onAnswered={() => {
                  questionsPoll.reload();
                  refreshAll();
                }}
              />
            )}
            {project && taskId ? (
              <Suspense fallback={<LoaderInline className="loading">Loading…</LoaderInline>}>
                <RunDetail
                  project={project}
                  taskId={taskId}
                  run={selectedRun}
                  taskStatus={selectedTask?.status ?? 'idle'}
                  taskDone={selectedTask?.done ?? false}
                  heartbeat={selectedRun ? runHeartbeat(selectedRun, lastOutput.current, now) : undefined}
                  onOutput={noteOutput}
                  onChanged={refreshAll}
                  onFollowLatest={() => navigate({ project, task: taskId })}
                  notify={notify}
                />
              </Suspense>
            ) : (
              <Island className="panel detail empty-detail">
                <IslandHeader border className="panel-header">
                  Run
                </IslandHeader>
                {projects.loading ? <LoaderInline>Loading…</LoaderInline> : <p className="empty">Select a task or a run in the tree to see its output.</p>}
              </Island>
            )}
            {project && (
              <MessageBus
                key={project}
                project={project}
                projectRoot={projectList.find((p) => p.id === project)?.project_root}
                taskId={taskId}
                scope={busScope}
                onScopeChange={setBusScope}
              />
            )}
          </section>
        </main>
      )}
      <Suspense fallback={null}>
        {creating && (
          <NewTaskDialog
            defaultProject={project}
            defaultAgent={runs.at(-1)?.agent_name || runs.at(-1)?.agent}
            onClose={() => setCreating(false)}
            onCreated={(p, t, r) => {
              setCreating(false);
              navigate({ project: p, task: t });
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
      </Suspense>
      <Toasts toasts={toasts} onDismiss={dismiss} />
    </ThemeProvider>
  );
}

function runHeartbeat(run: FlatRun, lastOutput: ReadonlyMap<string, number>, now: number) {
  const last = Math.max(lastOutput.get(run.id) ?? 0, parseTimeOrZero(run.start_time));
  return { colour: heartbeatColour(last, now), age: formatDuration(now - last) };
}
