import { randomBytes } from 'node:crypto';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { sha256Hex, writeTokenHash } from '@app/triggers';
import { UsageError } from '../../common/cli-errors';
import { withParentOptions } from '../engine/job-common';
import { out } from '@app/client';
import { ConfigFlags, triggerSettings } from './trigger-config';

@SubCommand({
  name: 'token',
  arguments: '<name>',
  description: "Make a new bearer token for an HTTP trigger: prints it once and keeps only its sha256 in the runs root (the old token stops working at once)",
})
export class TriggerTokenCommand extends CommandRunner {
  async run(args: string[], flags: ConfigFlags = {}): Promise<void> {
    if (args.length !== 1) throw new UsageError(`accepts 1 arg(s) (<name>), received ${args.length}`);
    const { config, root } = triggerSettings(withParentOptions(this.command, flags));
    const name = args[0];
    if (!config.triggers?.[name]) throw new UsageError(`trigger ${JSON.stringify(name)} is not in the config (${config.path})`);
    const token = `trg_${randomBytes(32).toString('base64url')}`;
    writeTokenHash(root, name, sha256Hex(token));
    out(`${token}\n`);
  }

  @Option({ flags: '--config <path>', description: 'config file (default $CONDUCTOR_CONFIG or the default lookup)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root the server uses (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }
}

/** `run-agent trigger …` (docs/triggers.md). */
@Command({ name: 'trigger', description: 'Manage the HTTP triggers of the config file (docs/triggers.md)', subCommands: [TriggerTokenCommand] })
export class TriggerGroupCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
