import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import type { UsageRow } from '@app/contracts';
import { usageReport, type UsageReport } from '@app/runner';
import { existingProjectDir, existingTaskDir, STORAGE_INDEX_FACTORY, type StorageIndexFactory, validateProjectId, validateTaskId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { resolveRoot } from '../engine/support/runs-root';
import { formatTable } from '../engine/support/table';

interface UsageFlags {
  root?: string;
  project?: string;
  task?: string;
  since?: string;
  json?: boolean;
}

/** `--since`: an RFC 3339 time or a Go duration back from now (`24h`). */
export function sinceFlag(text: string, now = Date.now()): Date {
  const t = text.trim();
  const dur = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(t);
  if (dur) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[dur[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
    return new Date(now - Number(dur[1]) * unit);
  }
  const d = /^\d{4}-\d\d-\d\d/.test(t) ? new Date(t) : new Date(NaN);
  if (Number.isNaN(d.getTime())) throw new UsageError(`--since must be an RFC 3339 time or a duration like 24h, got "${text}"`);
  return d;
}

@Command({
  name: 'usage',
  description:
    'Token usage and cost recorded in run-info.yaml, summed per project, task (with its sub-tree of child runs) and agent. ' +
    'Tokens = input + output; cache reads/writes are shown separately.',
})
export class UsageCommand extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(_args: string[], flags: UsageFlags = {}): Promise<void> {
    const root = resolveRoot(flags.root);
    const layout = this.indexFor(root).layout;
    const projectId = flags.project?.trim() ? validateProjectId(flags.project.trim()) : undefined;
    const taskId = flags.task?.trim() ? validateTaskId(flags.task.trim()) : undefined;
    if (taskId && !projectId) throw new UsageError('--task needs --project');
    // a project or task named on the command line must exist (did-you-mean otherwise), not read as zero usage
    if (projectId) {
      if (taskId) existingTaskDir(layout, projectId, taskId);
      else existingProjectDir(layout, projectId);
    }
    const since = flags.since !== undefined ? sinceFlag(flags.since) : undefined;
    const report = usageReport({ layout, projectId, taskId, since });
    process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : renderUsage(report));
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'only this project (default: every project of the runs root)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'with --project: this task, plus its tree (its runs and every descendant run)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--since <time>', description: 'only runs started since an RFC 3339 time or a duration ago (e.g. 24h, 7d)' })
  parseSince(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the report as JSON' })
  parseJson(): boolean {
    return true;
  }
}

const cost = (c: number | undefined): string => (c === undefined ? '-' : c.toFixed(6).replace(/0+$/, '').replace(/\.$/, ''));

function rows(title: string, list: UsageRow[]): string[][] {
  return list.map((r) => [title, r.key, String(r.runs), String(r.usage.input_tokens), String(r.usage.output_tokens), String(r.usage.cache_read_tokens), String(r.usage.cache_write_tokens), String(r.total_tokens), cost(r.usage.cost_usd)]);
}

export function renderUsage(r: UsageReport): string {
  const header = ['SCOPE', 'KEY', 'RUNS', 'INPUT', 'OUTPUT', 'CACHE_READ', 'CACHE_WRITE', 'TOKENS', 'COST_USD'];
  const u = r.usage;
  const total = ['total', r.task_id ?? r.project_id ?? 'all', String(r.runs), String(u.input_tokens), String(u.output_tokens), String(u.cache_read_tokens), String(u.cache_write_tokens), String(r.total_tokens), cost(u.cost_usd)];
  const lines = [header, total];
  if (r.tree) {
    const t = r.tree.usage;
    lines.push(['tree', r.task_id!, String(r.tree.runs), String(t.input_tokens), String(t.output_tokens), String(t.cache_read_tokens), String(t.cache_write_tokens), String(r.tree.total_tokens), cost(t.cost_usd)]);
  }
  if (!r.project_id) lines.push(...rows('project', r.by_project));
  lines.push(...rows('task', r.by_task), ...rows('agent', r.by_agent));
  const egress = Object.entries(r.egress_bytes ?? {}).map(([host, n]) => ['egress', host, String(n)]);
  return formatTable(lines) + (egress.length ? `\n${formatTable([['SCOPE', 'HOST:PORT', 'BYTES'], ...egress])}` : '');
}
