import type { Provider } from '@nestjs/common';
import { PauseCommand, UnpauseCommand } from './pause.command';
import { UsageCommand } from './usage.command';

/** usage, pause, unpause (usage accounting and budgets, #18) */
export const usageCommands: Provider[] = [UsageCommand, PauseCommand, UnpauseCommand];
