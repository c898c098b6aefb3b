import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { ClientOptions, selfUpdateStatus, ServerClient, startSelfUpdate, UpdateStartOptions } from '@app/client';
import { ClientCommand } from './client-command';

@SubCommand({ name: 'status', description: 'Show current server self-update state' })
export class ServerUpdateStatusCommand extends ClientCommand {
  execute(args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
    return selfUpdateStatus(client, args, opts);
  }
}

@SubCommand({ name: 'start', description: 'Request a safe server self-update to a new package' })
export class ServerUpdateStartCommand extends ClientCommand<UpdateStartOptions> {
  execute(args: string[], opts: UpdateStartOptions, client: ServerClient): Promise<void> {
    return startSelfUpdate(client, args, opts);
  }

  @Option({ flags: '--package <tgz|version>', description: 'the new package: a .tgz made by npm pack, a version (0.2.0) or conductor-loop@0.2.0' })
  parsePackage(value: string): string {
    return value;
  }

  @Option({ flags: '--binary <path>', description: 'path to the candidate package .tgz (upstream flag name)' })
  parseBinary(value: string): string {
    return value;
  }
}

@SubCommand({ name: 'update', description: 'Request or inspect safe server self-update', subCommands: [ServerUpdateStatusCommand, ServerUpdateStartCommand] })
export class ServerUpdateCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
