import type { Provider } from '@nestjs/common';
import { CHANGE_FEED, LIVENESS_PROBE, type ChangeFeed, type LivenessProbe } from '@app/storage';
import { BusHub, FileStreamService, RunDiscovery, RunLogHub, RunStreamsService, SseLifecycle } from '@app/streams';
import { API_CONTEXT, type ApiContext } from '../common/api-context';
import { MetricsService } from '../metrics/metrics.service';
import { REPLICA_RECHECK_MS, runInfoReader } from './run-status';

/** The shared SSE hubs of @app/streams, built from the server's context (one instance each). */
export const streamProviders: Provider[] = [
  {
    provide: RunLogHub,
    inject: [API_CONTEXT, CHANGE_FEED, LIVENESS_PROBE],
    useFactory: (ctx: ApiContext, feed: ChangeFeed, probe: LivenessProbe) =>
      new RunLogHub(ctx, feed, runInfoReader(ctx, probe), ctx.scaleout ? REPLICA_RECHECK_MS : undefined),
  },
  { provide: RunDiscovery, inject: [API_CONTEXT, CHANGE_FEED], useFactory: (ctx: ApiContext, feed: ChangeFeed) => new RunDiscovery(ctx, feed) },
  {
    provide: BusHub,
    inject: [API_CONTEXT, CHANGE_FEED, SseLifecycle, MetricsService],
    useFactory: (ctx: ApiContext, feed: ChangeFeed, lifecycle: SseLifecycle, metrics: MetricsService) =>
      new BusHub(ctx, feed, lifecycle, (ids) => metrics.countBusMessages(ids)),
  },
  {
    provide: RunStreamsService,
    inject: [API_CONTEXT, RunLogHub, RunDiscovery, SseLifecycle],
    useFactory: (ctx: ApiContext, hub: RunLogHub, discovery: RunDiscovery, lifecycle: SseLifecycle) => new RunStreamsService(ctx, hub, discovery, lifecycle),
  },
  FileStreamService,
];
