import type { ForgeConfig, ScheduleConfig, TriggerConfig } from '@app/storage';

export interface TriggersOptions {
  /** Runs root: records live in `<root>/.triggers/`. */
  root: string;
  schedules: Record<string, ScheduleConfig>;
  triggers: Record<string, TriggerConfig>;
  /** `forge:` (GitHub webhooks in, pull requests out). */
  forge?: ForgeConfig;
  /** Run the schedules on their cron (the server; false: list and fire only). */
  runSchedules: boolean;
}

export const TRIGGERS_OPTIONS = Symbol('TRIGGERS_OPTIONS');

/** Options from what the server was started with. */
export function triggersOptionsFrom(ctx: { root: string; config?: { schedules?: Record<string, ScheduleConfig>; triggers?: Record<string, TriggerConfig>; forge?: ForgeConfig }; disableTaskStart?: boolean }): TriggersOptions {
  return { root: ctx.root, schedules: ctx.config?.schedules ?? {}, triggers: ctx.config?.triggers ?? {}, forge: ctx.config?.forge, runSchedules: !ctx.disableTaskStart };
}
