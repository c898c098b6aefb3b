import type { Provider } from '@nestjs/common';
import { ScheduleFireCommand, ScheduleGroupCommand, ScheduleListCommand } from './schedule.commands';
import { TriggerGroupCommand, TriggerTokenCommand } from './trigger.commands';

/** schedule list|fire, trigger token (docs/triggers.md) */
export const triggerCommands: Provider[] = [ScheduleGroupCommand, ScheduleListCommand, ScheduleFireCommand, TriggerGroupCommand, TriggerTokenCommand];
