import Island, { Header as IslandHeader } from '@jetbrains/ring-ui-built/components/island/island';
import type { FlatRun, Project, ProjectStats } from '../api/types';
import { runCounts } from '../data/status';
import { formatBytes } from '../data/time';

interface ProjectListProps {
  projects: Project[];
  selected?: string;
  /** Task count of the selected project as the tree counts it, so the row agrees with the cards. */
  selectedTaskCount?: number;
  onSelect: (id: string) => void;
}

export function ProjectList({ projects, selected, selectedTaskCount, onSelect }: ProjectListProps) {
  const ordered = [...projects].sort((a, b) => (Date.parse(b.last_activity) || 0) - (Date.parse(a.last_activity) || 0) || a.id.localeCompare(b.id));
  return (
    <Island className="panel projects-panel">
      <IslandHeader border className="panel-header">
        Projects
      </IslandHeader>
      <nav className="projects" aria-label="Projects">
        {ordered.map((p) => {
          const count = p.id === selected && selectedTaskCount !== undefined ? selectedTaskCount : p.task_count;
          return (
            <a
              key={p.id}
              href={`?project=${encodeURIComponent(p.id)}`}
              className={p.id === selected ? 'project active' : 'project'}
              aria-current={p.id === selected ? 'page' : undefined}
              onClick={(e) => {
                if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
                e.preventDefault();
                onSelect(p.id);
              }}
              title={p.project_root ?? p.id}
            >
              <span className="project-id">{p.id}</span>
              <span className="muted project-meta">
                {count} {count === 1 ? 'task' : 'tasks'} · {relative(p.last_activity)}
              </span>
            </a>
          );
        })}
      </nav>
    </Island>
  );
}

function relative(time: string): string {
  const t = Date.parse(time);
  if (!t || time.startsWith('0001')) return 'no activity';
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}

/**
 * The cards count what the tree shows (tasks from the tree, runs from the same run list), so they
 * always agree with it; only the bus size comes from the project stats.
 */
export function StatsCards({ stats, runs, tasks }: { stats?: ProjectStats; runs?: readonly FlatRun[]; tasks?: number }) {
  if (!stats) return null;
  const counts = runs ? runCounts(runs) : undefined;
  const cards: [string, string | number][] = [
    ['tasks', tasks ?? stats.total_tasks],
    ['runs', counts?.runs ?? stats.total_runs],
    ['running', counts?.running ?? stats.running_runs],
    ['completed', counts?.completed ?? stats.completed_runs],
    ['failed', counts?.failed ?? stats.failed_runs + (stats.crashed_runs ?? 0)],
    ...(counts ? [['stopped', counts.stopped] as [string, number]] : []),
    ['bus size', formatBytes(stats.message_bus_total_bytes ?? 0)],
  ];
  return (
    <ul className="stats" aria-label="Project stats">
      {cards.map(([label, value]) => (
        <li key={label} className={`stat stat-${label.replace(' ', '-')}`}>
          <span className="stat-value">{value}</span>
          <span className="stat-label">{label}</span>
        </li>
      ))}
    </ul>
  );
}
