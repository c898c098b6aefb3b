import { Injectable, Optional } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service';
import { PlannerService } from '@app/planner';
import type { PlannerTaskRequest } from '@app/planner';
import type { LaunchRequest } from './task-launcher';

/** What the server needs from the root-task planner (apps/api/src/planner). */
export interface PlannerLike {
  enabled: boolean;
  submit(entry: LaunchRequest & { request?: PlannerTaskRequest }): Promise<{ status: 'started' | 'queued'; queuePosition?: number }>;
  dropTask(projectId: string, taskId: string): Promise<void>;
  queuePosition(projectId: string, taskId: string): number | undefined;
  queuedCount?(): number;
}

/**
 * Indirection to the planner so the routes work with or without it: without an enabled planner
 * every task launches at once (api.md §6.1, planner disabled).
 */
@Injectable()
export class PlannerBridge {
  planner?: PlannerLike;

  constructor(@Optional() planner?: PlannerService, @Optional() metrics?: MetricsService) {
    this.planner = planner;
    if (planner && metrics) metrics.setQueuedSource(() => (planner.enabled ? planner.queuedCount() : 0));
  }

  get enabled(): boolean {
    return !!this.planner?.enabled;
  }

  queuePosition(projectId: string, taskId: string): number | undefined {
    if (!this.enabled) return undefined;
    const pos = this.planner!.queuePosition(projectId, taskId);
    return pos && pos > 0 ? pos : undefined;
  }

  async dropTask(projectId: string, taskId: string): Promise<void> {
    if (this.enabled) await this.planner!.dropTask(projectId, taskId);
  }
}
