import { SubCommand } from 'nest-commander';
import { ClientOptions, ServerClient, serverStatus } from '@app/client';
import { ClientCommand } from './client-command';

@SubCommand({ name: 'status', description: 'Show conductor server status' })
export class ServerStatusCommand extends ClientCommand {
  execute(args: string[], opts: ClientOptions, client: ServerClient): Promise<void> {
    return serverStatus(client, args, opts);
  }
}

// `update status|start` live in update.commands.ts (self-update owner); re-exported for existing imports.
export { ServerUpdateCommand, ServerUpdateStartCommand, ServerUpdateStatusCommand } from './update.commands';
