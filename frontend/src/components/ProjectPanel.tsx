import type { FlatRun, Project, ProjectStats } from '../api/types';
import { runCounts } from '../data/status';
import { formatBytes } from '../data/time';

export function ProjectList({ projects, selected, onSelect }: { projects: Project[]; selected?: string; onSelect: (id: string) => void }) {
  const ordered = [...projects].sort((a, b) => (Date.parse(b.last_activity) || 0) - (Date.parse(a.last_activity) || 0) || a.id.localeCompare(b.id));
  return (
    <nav className="projects" aria-label="Projects">
      {ordered.map((p) => (
        <button key={p.id} className={p.id === selected ? 'project active' : 'project'} aria-current={p.id === selected} onClick={() => onSelect(p.id)} title={p.project_root ?? p.id}>
          <span className="project-id">{p.id}</span>
          <span className="muted">
            {p.task_count} tasks · {relative(p.last_activity)}
          </span>
        </button>
      ))}
    </nav>
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

/** Task count and bus size come from the project stats; run counts from the tree's runs. */
export function StatsCards({ stats, runs }: { stats?: ProjectStats; runs?: readonly FlatRun[] }) {
  if (!stats) return null;
  const counts = runs ? runCounts(runs) : undefined;
  const cards: [string, string | number][] = [
    ['tasks', stats.total_tasks],
    ['runs', counts?.runs ?? stats.total_runs],
    ['running', counts?.running ?? stats.running_runs],
    ['completed', counts?.completed ?? stats.completed_runs],
    ['failed', counts?.failed ?? stats.failed_runs + (stats.crashed_runs ?? 0)],
    ...(counts ? [['stopped', counts.stopped] as [string, number]] : []),
    ['bus size', formatBytes(stats.message_bus_total_bytes ?? 0)],
  ];
  return (
    <div className="stats" aria-label="Project stats">
      {cards.map(([label, value]) => (
        <div key={label} className={`stat stat-${label.replace(' ', '-')}`}>
          <span className="stat-value">{value}</span>
          <span className="stat-label">{label}</span>
        </div>
      ))}
    </div>
  );
}
