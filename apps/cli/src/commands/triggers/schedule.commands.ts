import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { listSchedules } from '@app/triggers';
import { UsageError } from '../../common/cli-errors';
import { withParentOptions } from '../engine/job-common';
import { ClientOptions, out, printRaw, seg, ServerClient, tabulate } from '@app/client';
import { ClientCommand } from '../server/client/client-command';
import { ConfigFlags, triggerSettings } from './trigger-config';

interface ListFlags extends ConfigFlags {
  json?: boolean;
}

@SubCommand({ name: 'list', description: 'List the configured schedules with their next fire time and last runs (reads the config and the records; no server needed)' })
export class ScheduleListCommand extends CommandRunner {
  async run(_args: string[], flags: ListFlags = {}): Promise<void> {
    const { config, root } = triggerSettings(withParentOptions(this.command, flags));
    const views = listSchedules(root, config.schedules ?? {});
    if (flags.json) return out(`${JSON.stringify({ schedules: views }, null, 2)}\n`);
    if (views.length === 0) return out('No schedules configured.\n');
    const rows = [['NAME', 'CRON', 'TIMEZONE', 'NEXT FIRE', 'LAST RUN', 'OUTCOME', 'TASK']];
    for (const v of views) {
      const last = v.history[v.history.length - 1];
      rows.push([v.name, v.cron, v.timezone, v.next_fire ?? '-', last?.slot ?? last?.fired_at ?? '-', v.error ? `error: ${v.error}` : (last?.outcome ?? '-'), last?.task_id ?? '-']);
    }
    out(tabulate(rows));
  }

  @Option({ flags: '--config <path>', description: 'config file (default $CONDUCTOR_CONFIG or the default lookup)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'output as JSON' })
  parseJson(): boolean {
    return true;
  }
}

@SubCommand({ name: 'fire', arguments: '<name>', description: "Start a schedule's task now through the running server (the cron slots are unchanged)" })
export class ScheduleFireCommand extends ClientCommand {
  async execute(args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
    if (args.length !== 1) throw new UsageError(`accepts 1 arg(s) (<name>), received ${args.length}`);
    const res = await client.call('POST', `/api/v1/schedules/${seg(args[0])}/fire`, { body: {}, expect: [201] });
    if (opts.json) return printRaw(res.text);
    const body = JSON.parse(res.text) as { run: { task_id?: string; outcome: string; error?: string } };
    out(`schedule ${args[0]}: ${body.run.outcome}${body.run.task_id ? ` ${body.run.task_id}` : ''}${body.run.error ? ` (${body.run.error})` : ''}\n`);
  }
}

/** `run-agent schedule …` (docs/triggers.md). */
@Command({ name: 'schedule', description: 'List and fire the schedules of the config file (docs/triggers.md)', subCommands: [ScheduleListCommand, ScheduleFireCommand] })
export class ScheduleGroupCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
