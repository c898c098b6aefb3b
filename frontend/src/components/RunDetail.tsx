import { useState } from 'react';
import Button from '@jetbrains/ring-ui-built/components/button/button';
import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import LoaderInline from '@jetbrains/ring-ui-built/components/loader-inline/loader-inline';
import { api, describeError } from '../api/client';
import type { FlatRun, ProjectRun } from '../api/types';
import { normalizeStatus, shownExitCode } from '../data/status';
import { parseTime, formatDuration } from '../data/time';
import { usePoll } from '../hooks/usePoll';
import { EgressLog } from './EgressLog';
import { LogView } from './LogView';
import { RunCriteria } from './RunCriteria';
import { RunTabs, type TabId } from './RunTabs';
import { HeartbeatBadge, StatusBadge } from './StatusBadge';
import { WorktreeBadge, WorktreeDiff } from './WorktreeDiff';
import type { HeartbeatColour } from '../data/heartbeat';


interface RunDetailProps {
  project: string;
  taskId: string;
  run?: FlatRun;
  taskStatus: string;
  /** The task has a DONE file (only then is there something for POST …/resume to reopen). */
  taskDone: boolean;
  /** Heartbeat of the run when it is running. */
  heartbeat?: { colour: HeartbeatColour; age: string };
  onOutput: (runId: string) => void;
  onChanged: () => void;
  /** After a resume: show the task's latest run (the new attempt) instead of a pinned one. */
  onFollowLatest: () => void;
  notify: (text: string, error?: boolean) => void;
}

export function RunDetail({ project, taskId, run, taskStatus, taskDone, heartbeat, onOutput, onChanged, onFollowLatest, notify }: RunDetailProps) {
  const [tab, setTab] = useState<TabId>('stdout');
  const [busy, setBusy] = useState<string | null>(null);
  const running = run ? normalizeStatus(run.status) === 'running' : false;
  // a sandboxed run's egress denials: the task bus's EGRESS_DENIED messages of this run
  const busKey = run?.sandbox === 'bwrap' ? `${project}/${taskId}/${run.id}` : null;
  const bus = usePoll(busKey, () => api.messages(project, taskId), 5000);

  const act = async (label: string, action: () => Promise<unknown>, done: string) => {
    setBusy(label);
    try {
      await action();
      notify(done);
      onChanged();
    } catch (err) {
      notify(`${label} failed: ${describeError(err)}`, true);
    } finally {
      setBusy(null);
    }
  };

  const resume = () =>
    act(
      'Resume task',
      async () => {
        // POST …/resume only reopens a DONE task; a stopped or failed one is restarted directly.
        if (taskDone) await api.resumeTask(project, taskId);
        const prompt = (await api.taskFile(project, taskId)).content;
        await api.createTask({ project_id: project, task_id: taskId, agent_type: run?.agent_name || run?.agent || 'claude', prompt, attach_mode: 'resume' });
        onFollowLatest();
      },
      `Task ${taskId} resumed`,
    );

  return (
    <Island className="panel detail" aria-label="Run detail" role="region">
      <IslandHeader border wrapWithTitle={false} className="panel-header detail-header">
        <div className="detail-title">
          <span className="task-id" title={taskId}>
            {taskId}
          </span>
          {run ? (
            <>
              <span className="sep">/</span>
              <span className="run-id">run {run.id}</span>
              <StatusBadge status={normalizeStatus(run.status)} />
              {running && heartbeat && <HeartbeatBadge colour={heartbeat.colour} age={heartbeat.age} />}
              <span className="muted">
                <span className="agent-name">{agentLabel(run)}</span>
                {shownExitCode(run) !== '' && ` · exit ${shownExitCode(run)}`} · {duration(run)}
              </span>
              {run.sandbox && (
                <span className="muted run-sandbox" data-testid="run-sandbox">
                  sandbox {run.sandbox}
                  {Object.entries(run.egress_bytes ?? {}).map(([host, n]) => ` · ${host} ${n} B`).join('')}
                </span>
              )}
              {run.sandbox && <EgressLog messages={bus.data ?? []} runId={run.id} />}
              {run.queued_reason && normalizeStatus(run.status) === 'queued' && (
                <span className="muted run-queued" data-testid="run-queued-reason">
                  {run.queued_reason}
                </span>
              )}
              {run.error_summary && (
                <span className="run-error" role="status">
                  {run.error_summary}
                </span>
              )}
            </>
          ) : (
            <span className="muted">no runs yet ({taskStatus})</span>
          )}
          <WorktreeBadge project={project} taskId={taskId} />
        </div>
        <div className="detail-actions">
          {run && running && (
            <Button danger disabled={busy !== null} onClick={() => act('Stop run', () => api.stopRun(project, taskId, run.id), `Stop requested for run ${run.id}`)}>
              Stop run
            </Button>
          )}
          {normalizeStatus(taskStatus) === 'running' && (
            <Button danger disabled={busy !== null} onClick={() => act('Stop task', () => api.stopTask(project, taskId), `Task ${taskId} stopped`)}>
              Stop task
            </Button>
          )}
          {normalizeStatus(taskStatus) !== 'running' && (
            <Button disabled={busy !== null} onClick={resume}>
              Resume task
            </Button>
          )}
        </div>
      </IslandHeader>
      <RunTabs selected={tab} onSelect={setTab}>
        {tab === 'task' && <TaskFile project={project} taskId={taskId} />}
        {tab === 'diff' && <WorktreeDiff project={project} taskId={taskId} notify={notify} onChanged={onChanged} />}
        {tab === 'info' && run && <RunInfoView project={project} taskId={taskId} runId={run.id} status={run.status} />}
        {(tab === 'stdout' || tab === 'stderr' || tab === 'output') &&
          (run ? (
            <LogView
              key={`${run.id}:${tab}`}
              project={project}
              task={taskId}
              run={run.id}
              name={tab === 'output' ? 'output.md' : tab}
              live={running && tab !== 'output'}
              render={tab === 'stdout'}
              onOutput={onOutput}
              onFinished={onChanged}
            />
          ) : (
            <p className="empty">This task has no runs yet.</p>
          ))}
        {tab === 'info' && !run && <p className="empty">This task has no runs yet.</p>}
      </RunTabs>
    </Island>
  );
}

/** The configured agent name, with its type when they differ ("reviewer (claude)"). */
export function agentLabel(run: Pick<FlatRun, 'agent' | 'agent_name'>): string {
  return run.agent_name && run.agent_name !== run.agent ? `${run.agent_name} (${run.agent})` : run.agent;
}

function duration(run: FlatRun): string {
  const start = parseTime(run.start_time);
  if (!start) return '';
  const end = parseTime(run.end_time) ?? Date.now();
  return formatDuration(end - start);
}

function TaskFile({ project, taskId }: { project: string; taskId: string }) {
  const file = usePoll(`${project}/${taskId}`, () => api.taskFile(project, taskId), 0);
  if (file.error) return <p className="empty">{describeError(file.error)}</p>;
  if (!file.data) return <LoaderInline className="loading">Loading…</LoaderInline>;
  return <pre className="file-text">{file.data.content}</pre>;
}

function RunInfoView({ project, taskId, runId, status }: { project: string; taskId: string; runId: string; status: string }) {
  const info = usePoll<ProjectRun>(`${project}/${taskId}/${runId}/${status}`, () => api.run(project, taskId, runId), 0);
  if (info.error) return <p className="empty">{describeError(info.error)}</p>;
  if (!info.data) return <LoaderInline className="loading">Loading…</LoaderInline>;
  const entries = Object.entries(info.data).filter(([k]) => k !== 'files' && k !== 'criteria');
  return (
    // one scroll container (focusable, so the keyboard can scroll it) for the criteria and the fields
    <div className="run-info-view" tabIndex={0} role="region" aria-label="Run info">
    {info.data.criteria && <RunCriteria criteria={info.data.criteria} />}
    <dl className="run-info">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
        </div>
      ))}
      {info.data.files && (
        <div>
          <dt>files</dt>
          <dd>{info.data.files.map((f) => `${f.name}${f.size !== undefined ? ` (${f.size} B)` : ''}`).join(', ')}</dd>
        </div>
      )}
    </dl>
    </div>
  );
}
