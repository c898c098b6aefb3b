import { CommandRunner, Option } from 'nest-commander';
import { UsageError } from '../../../common/cli-errors';
import { clientApiKey, defaultServerUrl, ServerClient } from './server-client';

export interface ClientOptions {
  server?: string;
  json?: boolean;
  apiKey?: string;
}

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

export interface ProjectOptions extends ClientOptions {
  project?: string;
}

/** Leaves that take `--project`. */
export abstract class ProjectScopedCommand<O extends ProjectOptions = ProjectOptions> extends ClientCommand<O> {
  @Option({ flags: '--project <id>', description: 'project ID' })
  parseProject(value: string): string {
    return value;
  }
}

export function out(text: string): void {
  process.stdout.write(text);
}

/** Prints a raw JSON body as upstream does: trimmed, one trailing newline. */
export function printRaw(text: string): void {
  out(`${text.trim()}\n`);
}

export function requireFlag(value: string | undefined, flag: string): string {
  if (!value || value.trim() === '') throw new UsageError(`required flag(s) "${flag}" not set`);
  return value;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function parseIntFlag(value: string, flag: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new UsageError(`invalid argument "${value}" for "--${flag}" flag: expected an integer`);
  return Number(value);
}
