import type { Provider } from '@nestjs/common';
import { BusCommand, BusDiscoverCommand, BusPostCommand, BusReadCommand, BusRepairCommand } from './bus.command';

/** bus post | read | repair | discover */
export const busCommands: Provider[] = [BusCommand, BusPostCommand, BusReadCommand, BusRepairCommand, BusDiscoverCommand];
