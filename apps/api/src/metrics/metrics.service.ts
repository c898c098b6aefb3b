import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectMetric } from '@willsoto/nestjs-prometheus';
import type { Counter, Gauge } from 'prom-client';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { queueDir, scanOpenQuestions } from '@app/runner';
import { onBusAppend } from '@app/messagebus';
import { LIVENESS_PROBE, LivenessProbe, RunInfo } from '@app/storage';
import { API_CONTEXT, ApiContext } from '../common/api-context';
import { DEPRECATED_ALIASES, M } from './metric-names';

const DEDUPE_LIMIT = 20000;

/**
 * Keeps the conductor_* metrics true to the runs root (D10). Run counters come from run-info
 * transitions observed by scanning the (mtime-cached) storage index at every scrape and whenever a
 * server-launched task loop ends: a run first seen after server start counts once in
 * agent_runs_total{agent_type}; a run seen going to completed/failed (or first seen already
 * finished, after start) counts once in completed/failed. Runs already on disk at start are the
 * baseline. A fallback is a run whose previous run (previous_run_id) failed with another agent.
 * Queued = root tasks in the planner queue + runs of any process waiting for a run slot.
 */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  private statuses?: Map<string, string>;
  /** Two generations of counted ids: the older one is dropped when the newer one fills up. */
  private seenMessages = new Set<string>();
  private olderSeen = new Set<string>();
  private readonly stopObserving: () => void;
  private queuedSource?: () => number;

  constructor(
    @Inject(API_CONTEXT) private readonly ctx: ApiContext,
    @InjectMetric(M.uptime) private readonly uptime: Gauge<string>,
    @InjectMetric(M.activeRuns) private readonly activeRuns: Gauge<string>,
    @InjectMetric(M.completedRuns) private readonly completedRuns: Counter<string>,
    @InjectMetric(M.failedRuns) private readonly failedRuns: Counter<string>,
    @InjectMetric(M.busAppends) private readonly busAppends: Counter<string>,
    @InjectMetric(M.queuedRuns) private readonly queuedRuns: Gauge<string>,
    @InjectMetric(M.apiRequests) private readonly apiRequests: Counter<string>,
    @InjectMetric(M.agentRuns) private readonly agentRuns: Counter<string>,
    @InjectMetric(M.agentFallbacks) private readonly agentFallbacks: Counter<string>,
    @InjectMetric(M.tasksNeedingInput) private readonly tasksNeedingInput: Gauge<string>,
    @InjectMetric(M.agentTokens) private readonly agentTokens: Counter<string>,
    @InjectMetric(M.agentCost) private readonly agentCost: Counter<string>,
    @InjectMetric(DEPRECATED_ALIASES.activeRunsTotal) private readonly activeRunsAlias: Gauge<string>,
    @InjectMetric(DEPRECATED_ALIASES.queuedRunsTotal) private readonly queuedRunsAlias: Gauge<string>,
    @Inject(LIVENESS_PROBE) private readonly probe: LivenessProbe,
  ) {
    this.scanRuns();
    // Every append by a BusWriter of this process: the API, the server's task loops, completion posts.
    this.stopObserving = onBusAppend((_path, messages) => this.countBusMessages(messages.map((m) => m.msg_id)));
  }

  onModuleDestroy(): void {
    this.stopObserving();
  }

  countRequest(method: string, status: number): void {
    this.apiRequests.inc({ method: method.toUpperCase(), status: String(status) });
  }

  /**
   * conductor_messagebus_appends_total: appends made by this process (any BusWriter) plus new
   * messages of other processes seen by the shared bus tails, each msg_id once (an own append seen
   * again by a tail is not counted twice).
   */
  countBusMessages(ids: string[]): void {
    for (const id of ids) {
      if (this.seenMessages.has(id) || this.olderSeen.has(id)) continue;
      if (this.seenMessages.size >= DEDUPE_LIMIT) {
        this.olderSeen = this.seenMessages;
        this.seenMessages = new Set<string>();
      }
      this.seenMessages.add(id);
      this.busAppends.inc();
    }
  }

  /** The planner registers how many root tasks wait for a slot. */
  setQueuedSource(source: () => number): void {
    this.queuedSource = source;
  }

  refresh(): void {
    this.uptime.set((Date.now() - this.ctx.startedAt) / 1000);
    const queued = (this.queuedSource?.() ?? 0) + this.runsWaitingForSlot();
    this.queuedRuns.set(queued);
    this.queuedRunsAlias.set(queued);
    this.tasksNeedingInput.set(scanOpenQuestions(this.ctx.layout).length);
    this.scanRuns();
  }

  /** Runs of any process waiting for a max_concurrent_runs slot (D13): live `<root>/.conductor/queue/<run_id>` markers. */
  private runsWaitingForSlot(): number {
    const dir = queueDir(this.ctx.root);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return 0;
    }
    return names.filter((name) => {
      try {
        const pid = Number.parseInt(fs.readFileSync(path.join(dir, name), 'utf8'), 10);
        return pid > 0 && this.probe.isPidAlive(pid);
      } catch {
        return false;
      }
    }).length;
  }

  scanRuns(): void {
    let infos: RunInfo[];
    try {
      infos = this.ctx.index.allRunInfos();
    } catch {
      return;
    }
    const baseline = this.statuses === undefined;
    const previous = this.statuses ?? new Map<string, string>();
    const next = new Map<string, string>();
    const byId = new Map(infos.map((i) => [i.run_id, i]));
    let active = 0;
    for (const info of infos) {
      const id = info.run_id;
      // a pre-allocated run folder without run-info yet, or a run-info that cannot be parsed, is not a run to count until it has a record
      if (!id || ((info.status === 'unknown' || info.status === 'corrupt') && !info.agent)) continue;
      next.set(id, info.status);
      if (info.status === 'running') active++;
      if (baseline) continue;
      const before = previous.get(id);
      if (before === undefined) {
        this.agentRuns.inc({ agent_type: info.agent || 'unknown' });
        const prev = info.previous_run_id ? byId.get(info.previous_run_id) : undefined;
        if (prev && prev.status === 'failed' && prev.agent && info.agent && prev.agent !== info.agent) {
          this.agentFallbacks.inc({ from_type: prev.agent, to_type: info.agent });
        }
      }
      if (before !== info.status && (before === undefined || before === 'running' || before === 'unknown')) {
        if (info.status === 'completed') this.completedRuns.inc();
        if (info.status === 'failed') this.failedRuns.inc();
        if (info.status === 'completed' || info.status === 'failed') this.countUsage(info);
      }
    }
    this.statuses = next;
    this.activeRuns.set(active);
    this.activeRunsAlias.set(active);
  }

  /** #18: a finished run's usage, once (runs finish once; usage is written with the final status). */
  private countUsage(info: RunInfo): void {
    const u = info.usage;
    if (!u) return;
    const labels = { agent_type: info.agent || 'unknown', project_id: info.project_id };
    const kinds: [string, number][] = [['input', u.input_tokens], ['output', u.output_tokens], ['cache_read', u.cache_read_tokens], ['cache_write', u.cache_write_tokens]];
    for (const [kind, n] of kinds) if (n > 0) this.agentTokens.inc({ ...labels, kind }, n);
    if (u.cost_usd) this.agentCost.inc(labels, u.cost_usd);
  }
}
