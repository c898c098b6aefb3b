import { CommandRunner, Option } from 'nest-commander';
import { clientApiKey, ClientOptions, defaultServerUrl, ProjectOptions, ServerClient } from '@app/client';

export type { ClientOptions, ProjectOptions };

/** Shared flags of every `run-agent server …` / `conductor …` client leaf. */
export abstract class ClientCommand<O extends ClientOptions = ClientOptions> extends CommandRunner {
  abstract execute(args: string[], opts: O, client: ServerClient): Promise<void>;

  async run(args: string[], opts: O): Promise<void> {
    const server = opts.server ?? defaultServerUrl();
    const client = new ServerClient(server, clientApiKey(opts.apiKey, server));
    await this.execute(args, opts, client);
  }

  @Option({ flags: '--server <url>', description: 'conductor server URL (default $CONDUCTOR_URL, $CONDUCTOR_SERVER or http://localhost:14355)' })
  parseServer(value: string): string {
    return value;
  }

  @Option({ flags: '--json', description: 'output the response as JSON' })
  parseJson(): boolean {
    return true;
  }

  @Option({ flags: '--api-key <key>', description: 'API key sent as a Bearer token (default $CONDUCTOR_API_KEY, else for a server on this host the key it generated in ~/.run-agent/api-key)' })
  parseApiKey(value: string): string {
    return value;
  }
}

/** Leaves that take `--project`. */
export abstract class ProjectScopedCommand<O extends ProjectOptions = ProjectOptions> extends ClientCommand<O> {
  @Option({ flags: '--project <id>', description: 'project ID' })
  parseProject(value: string): string {
    return value;
  }
}
