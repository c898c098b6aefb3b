import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { BusPostOptions, BusReadOptions, collect, parseIntFlag, postBus, readBus, requireFlag, ServerClient, watchTasks, WatchOptions } from '@app/client';
import { validateHeaderFields } from '@app/messagebus';
import { asUsageError } from '../../bus/bus-post';
import { ProjectScopedCommand } from './client-command';

@SubCommand({ name: 'watch', description: 'Watch tasks until they complete' })
export class ServerWatchCommand extends ProjectScopedCommand<WatchOptions> {
  execute(args: string[], opts: WatchOptions, client: ServerClient): Promise<void> {
    return watchTasks(client, args, opts);
  }

  @Option({ flags: '--task <id>', description: 'task ID to watch (repeatable; default: all tasks of the project)' })
  parseTask(value: string, previous?: string[]): string[] {
    return collect(value, previous);
  }

  @Option({ flags: '--timeout <duration>', description: 'maximum wait (default 30m); exit code 1 on timeout' })
  parseTimeout(value: string): string {
    return value;
  }

  @Option({ flags: '--interval <duration>', description: 'poll interval (default 5s)' })
  parseInterval(value: string): string {
    return value;
  }
}

@SubCommand({ name: 'read', description: 'Read messages from the project or task message bus' })
export class ServerBusReadCommand extends ProjectScopedCommand<BusReadOptions> {
  execute(args: string[], opts: BusReadOptions, client: ServerClient): Promise<void> {
    return readBus(client, args, opts);
  }

  @Option({ flags: '--task <id>', description: 'task ID (reads the task bus if set)' })
  parseTask(value: string): string {
    return value;
  }

  @Option({ flags: '--tail <n>', description: 'show the last N messages (0 = all)' })
  parseTail(value: string): number {
    return parseIntFlag(value, 'tail');
  }

  @Option({ flags: '--follow', description: 'stream new messages via SSE' })
  parseFollow(): boolean {
    return true;
  }
}

@SubCommand({ name: 'post', description: 'Post a message to the project or task message bus' })
export class ServerBusPostCommand extends ProjectScopedCommand<BusPostOptions> {
  execute(args: string[], opts: BusPostOptions, client: ServerClient): Promise<void> {
    const project = requireFlag(opts.project, 'project');
    // the server would answer 400; the same validator refuses it here as a usage error (exit 2)
    asUsageError(() => validateHeaderFields({ type: opts.type ?? 'INFO', project_id: project, task_id: opts.task }));
    return postBus(client, args, opts);
  }

  @Option({ flags: '--task <id>', description: 'task ID (posts to the task bus if set)' })
  parseTask(value: string): string {
    return value;
  }

  @Option({ flags: '--type <type>', description: 'message type (default INFO)' })
  parseType(value: string): string {
    return value;
  }

  @Option({ flags: '--body <text>', description: 'message body (read from stdin when omitted and stdin is a pipe)' })
  parseBody(value: string): string {
    return value;
  }
}

@SubCommand({ name: 'bus', description: 'Read and post to the message bus via the server API', subCommands: [ServerBusReadCommand, ServerBusPostCommand] })
export class ServerBusCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
