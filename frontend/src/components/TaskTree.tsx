import { memo, useCallback, useMemo, useState, type KeyboardEvent } from 'react';
import Input from '@jetbrains/ring-ui-built/components/input/input';
import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import type { FlatRun, TaskListItem } from '../api/types';
import { heartbeatColour, type HeartbeatColour } from '../data/heartbeat';
import { DISPLAY_STATUSES, normalizeStatus, type DisplayStatus } from '../data/status';
import { parseTimeOrZero } from '../data/status';
import { formatDuration } from '../data/time';
import { buildTaskTree, flattenTree, runKey, taskKey, type TreeFilter, type TreeRow } from '../data/tree';
import { treeKeyAction } from '../data/treenav';
import { RingSelect } from '../ui/RingSelect';
import { HeartbeatBadge, StatusBadge } from './StatusBadge';
import { VirtualList } from './VirtualList';

const ROW_HEIGHT = 26;
const STATUS_OPTIONS = [{ value: 'all', label: 'all statuses' }, ...DISPLAY_STATUSES.map((value) => ({ value }))];

interface TaskTreeProps {
  runs: readonly FlatRun[];
  tasks: readonly TaskListItem[];
  selectedTaskId?: string;
  selectedRunId?: string;
  /** Time of each running run's latest output (from the live log stream). */
  lastOutput: ReadonlyMap<string, number>;
  now: number;
  onSelectTask: (taskId: string) => void;
  onSelectRun: (taskId: string, runId: string) => void;
}

export function TaskTree({ runs, tasks, selectedTaskId, selectedRunId, lastOutput, now, onSelectTask, onSelectRun }: TaskTreeProps) {
  const [filter, setFilter] = useState<TreeFilter>({ text: '', status: 'all' });
  const [expansion, setExpansion] = useState<Map<string, boolean>>(() => new Map());
  const tree = useMemo(() => buildTaskTree(runs, tasks), [runs, tasks]);
  const rows = useMemo(() => flattenTree(tree, expansion, filter, selectedTaskId), [tree, expansion, filter, selectedTaskId]);

  const toggle = useCallback((row: TreeRow) => {
    setExpansion((prev) => new Map(prev).set(row.key, !row.expanded));
  }, []);

  // The active row of keyboard navigation (aria-activedescendant); it starts on the selection.
  const [activeKey, setActiveKey] = useState<string | undefined>();
  const selectedKey = selectedRunId ? runKey(selectedRunId) : selectedTaskId ? taskKey(selectedTaskId) : undefined;
  let active = rows.findIndex((r) => r.key === (activeKey ?? selectedKey));
  if (active < 0) active = rows.findIndex((r) => r.key === selectedKey);
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const action = treeKeyAction(rows, active < 0 ? 0 : active, e.key);
    if (!action) return;
    e.preventDefault();
    const row = rows[action.index];
    if (action.kind === 'move') setActiveKey(row.key);
    else if (action.kind === 'toggle') toggle(row);
    else {
      setActiveKey(row.key);
      if (row.run) onSelectRun(row.task.id, row.run.run.id);
      else onSelectTask(row.task.id);
    }
  };

  const renderRow = (i: number) => {
    const row = rows[i];
    const run = row.run?.run;
    let heartbeat: HeartbeatColour | undefined;
    let age = '';
    if (run && normalizeStatus(run.status) === 'running') {
      const last = Math.max(lastOutput.get(run.id) ?? 0, parseTimeOrZero(run.start_time));
      heartbeat = heartbeatColour(last, now);
      age = formatDuration(now - last);
    }
    return (
      <TreeRowView
        key={row.key}
        row={row}
        status={run ? normalizeStatus(run.status) : row.task.status}
        exitCode={run?.exit_code}
        heartbeat={heartbeat}
        age={age}
        selected={run ? run.id === selectedRunId : row.task.id === selectedTaskId && !selectedRunId}
        active={i === active}
        id={`tree-row-${i}`}
        onToggle={toggle}
        onSelectTask={onSelectTask}
        onSelectRun={onSelectRun}
      />
    );
  };

  return (
    <Island className="panel tree-panel">
      <IslandHeader border className="panel-header">
        Tasks
      </IslandHeader>
      <div className="tree-filters">
        <Input
          className="tree-filter-input"
          aria-label="Filter tasks"
          placeholder="Filter by task, run or agent"
          value={filter.text}
          onChange={(e) => setFilter((f) => ({ ...f, text: e.target.value }))}
          onClear={() => setFilter((f) => ({ ...f, text: '' }))}
        />
        <RingSelect label="Status filter" value={filter.status} options={STATUS_OPTIONS} onChange={(v) => setFilter((f) => ({ ...f, status: v as DisplayStatus | 'all' }))} />
      </div>
      {rows.length === 0 ? (
        <p className="empty">{tree.length === 0 ? 'No tasks in this project yet. Use “New task” to start one.' : 'No task matches the filter.'}</p>
      ) : (
        <VirtualList
          count={rows.length}
          rowHeight={ROW_HEIGHT}
          renderRow={renderRow}
          className="tree"
          ariaLabel="Task tree"
          role="tree"
          scrollToIndex={active}
          activeDescendant={active >= 0 ? `tree-row-${active}` : undefined}
          onKeyDown={onKeyDown}
        />
      )}
    </Island>
  );
}

/** Accessible name of a row's expand control: `Expand <run id>` / `Collapse <task id>`. */
export function expandLabel(row: TreeRow): string {
  return `${row.expanded ? 'Collapse' : 'Expand'} ${row.run ? row.run.run.id : row.task.id}`;
}

interface TreeRowViewProps {
  row: TreeRow;
  status: DisplayStatus;
  exitCode?: number;
  heartbeat?: HeartbeatColour;
  age: string;
  selected: boolean;
  active: boolean;
  id: string;
  onToggle: (row: TreeRow) => void;
  onSelectTask: (taskId: string) => void;
  onSelectRun: (taskId: string, runId: string) => void;
}

// Rows only re-render when what they show changes, so live status updates touch single rows.
const TreeRowView = memo(
  function TreeRowView({ row, status, exitCode, heartbeat, age, selected, active, id, onToggle, onSelectTask, onSelectRun }: TreeRowViewProps) {
    const run = row.run;
    const label = run ? runLabel(run.relation, run.attempt) : undefined;
    return (
      <div
        id={id}
        className={`tree-row ${row.kind} ${selected ? 'selected' : ''} ${active ? 'active' : ''}`}
        style={{ paddingLeft: 6 + row.depth * 16 }}
        role="treeitem"
        aria-level={row.depth + 1}
        aria-selected={selected}
        aria-expanded={row.hasChildren ? row.expanded : undefined}
        data-key={row.key}
      >
        {row.hasChildren ? (
          // #30.11: the name is the aria-label (and the tooltip); the ▸/▾ glyph is drawn by CSS with
          // empty alt text, so no visible text competes with the name (axe label-content-name-mismatch)
          <button className={`twisty ${row.expanded ? 'expanded' : 'collapsed'}`} tabIndex={-1} aria-label={expandLabel(row)} title={expandLabel(row)} onClick={() => onToggle(row)} />
        ) : (
          <span className="twisty" />
        )}
        <button
          className="tree-label"
          tabIndex={-1}
          title={run ? `run ${run.run.id}` : `task ${row.task.id}`}
          onClick={() => (run ? onSelectRun(row.task.id, run.run.id) : onSelectTask(row.task.id))}
        >
          {run ? (
            <>
              {label && <span className="relation">{label}</span>}
              <span className="run-id">{run.run.id}</span>
              <span className="agent" title={`agent ${run.run.agent_name || run.run.agent} (type ${run.run.agent})`}>
                {run.run.agent_name || run.run.agent}
              </span>
            </>
          ) : (
            <>
              <span className="task-id">{row.task.id}</span>
              <span className="count">
                {row.task.runs.length} {row.task.runs.length === 1 ? 'run' : 'runs'}
              </span>
            </>
          )}
        </button>
        {heartbeat && <HeartbeatBadge colour={heartbeat} age={age} />}
        <StatusBadge status={status} />
        {run && status !== 'running' && exitCode !== undefined && exitCode !== 0 && <span className="exit">exit {exitCode}</span>}
      </div>
    );
  },
  (a, b) =>
    a.row.key === b.row.key &&
    a.row.depth === b.row.depth &&
    a.row.expanded === b.row.expanded &&
    a.row.hasChildren === b.row.hasChildren &&
    a.row.run?.relation === b.row.run?.relation &&
    a.row.run?.attempt === b.row.run?.attempt &&
    a.row.task.runs.length === b.row.task.runs.length &&
    a.status === b.status &&
    a.exitCode === b.exitCode &&
    a.heartbeat === b.heartbeat &&
    a.age === b.age &&
    a.selected === b.selected &&
    a.active === b.active &&
    a.id === b.id &&
    a.row.run?.run.agent_name === b.row.run?.run.agent_name &&
    a.onSelectRun === b.onSelectRun &&
    a.onSelectTask === b.onSelectTask,
);

function runLabel(relation: string, attempt: number): string | undefined {
  if (relation === 'restart') return `restart #${attempt - 1}`;
  if (relation === 'child') return 'child';
  return undefined;
}

export { taskKey, runKey };
