import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { makeCounterProvider, makeGaugeProvider, PrometheusModule } from '@willsoto/nestjs-prometheus';
import { register } from 'prom-client';
import { MetricsController } from './metrics.controller';
import { DEPRECATED_ALIASES, M } from './metric-names';
import { MetricsService } from './metrics.service';

let defaultMetricsRegistered = false;

/**
 * prom-client's sums of its labelled `nodejs_active_{handles,requests,resources}` gauges: gauges
 * named like counters, which `promtool check metrics` flags. `sum(nodejs_active_handles)` etc. give
 * the same numbers, so /metrics leaves them out.
 */
const MISNAMED_PROCESS_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const metricProviders: Provider[] = [
  makeGaugeProvider({ name: M.uptime, help: 'Seconds since the server started.' }),
  makeGaugeProvider({ name: M.activeRuns, help: 'Agent runs currently running under the runs root.' }),
  makeCounterProvider({ name: M.completedRuns, help: 'Agent runs observed finishing with status completed.' }),
  makeCounterProvider({ name: M.failedRuns, help: 'Agent runs observed finishing with status failed.' }),
  makeCounterProvider({ name: M.busAppends, help: 'Message bus appends made through the server or observed by its bus tails.' }),
  makeGaugeProvider({ name: M.queuedRuns, help: 'Root tasks waiting for a free planner slot.' }),
  makeCounterProvider({ name: M.apiRequests, help: 'HTTP requests answered, by method and status.', labelNames: ['method', 'status'] }),
  makeCounterProvider({ name: M.agentRuns, help: 'Agent runs started, by agent type.', labelNames: ['agent_type'] }),
  makeGaugeProvider({ name: M.tasksNeedingInput, help: 'Tasks in needs_input: an open QUESTION/BLOCKED on their bus without an ANSWER.' }),
  makeCounterProvider({ name: M.agentTokens, help: 'Tokens used by finished agent runs (run-info usage), by agent type, project and kind (input, output, cache_read, cache_write).', labelNames: ['agent_type', 'project_id', 'kind'] }),
  makeCounterProvider({ name: M.agentCost, help: 'Cost in US dollars reported by finished agent runs, by agent type and project.', labelNames: ['agent_type', 'project_id'] }),
  makeCounterProvider({ name: M.agentFallbacks, help: 'Agent fallbacks after a failed run, by agent types.', labelNames: ['from_type', 'to_type'] }),
  makeGaugeProvider({ name: DEPRECATED_ALIASES.activeRunsTotal, help: `Deprecated: use ${M.activeRuns} (same value; this name goes in the next release).` }),
  makeGaugeProvider({ name: DEPRECATED_ALIASES.queuedRunsTotal, help: `Deprecated: use ${M.queuedRuns} (same value; this name goes in the next release).` }),
];

/**
 * Prometheus metrics (api.md §4 + D10). Process metrics are collected unless disabled; they are
 * always off under NODE_ENV=test because prom-client's registry is per process and a second
 * registration of the default metrics throws.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(opts: { defaultMetrics?: boolean } = {}): DynamicModule {
    const defaults = !defaultMetricsRegistered && (opts.defaultMetrics ?? process.env.NODE_ENV !== 'test');
    if (defaults) defaultMetricsRegistered = true;
    const prometheus = PrometheusModule.register({ controller: MetricsController, path: '/metrics', defaultMetrics: { enabled: defaults } });
    if (defaults) for (const name of MISNAMED_PROCESS_GAUGES) register.removeSingleMetric(name);
    return {
      module: MetricsModule,
      imports: [prometheus],
      providers: [...metricProviders, MetricsService],
      exports: [MetricsService, ...metricProviders],
    };
  }
}
