import { Controller, Get, Res } from '@nestjs/common';
import { PrometheusController } from '@willsoto/nestjs-prometheus';
import { MetricsService } from './metrics.service';

/** GET /metrics: refreshes the run-derived metrics, then renders the registry as Prometheus text. */
@Controller()
export class MetricsController extends PrometheusController {
  constructor(private readonly metrics: MetricsService) {
    super();
  }

  @Get()
  override async index(@Res({ passthrough: true }) response: unknown): Promise<string> {
    this.metrics.refresh();
    return super.index(response);
  }
}
