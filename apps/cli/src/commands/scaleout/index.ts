import type { Provider } from '@nestjs/common';
import { WorkerCommand } from './worker.command';

/** worker (scale-out over NATS JetStream) */
export const scaleoutCommands: Provider[] = [WorkerCommand];
