import type { Provider } from '@nestjs/common';
import { BusCommand, BusDiscoverCommand, BusPostCommand, BusReadCommand } from './bus.command';

/** bus post | read | discover */
export const busCommands: Provider[] = [BusCommand, BusPostCommand, BusReadCommand, BusDiscoverCommand];
