import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { createConductorMcp, DetachedJobStarter } from '@app/mcp';
import { MessageBusService } from '@app/messagebus';
import { CHANGE_FEED, type ChangeFeed, STORAGE_INDEX_FACTORY, type StorageIndexFactory } from '@app/storage';
import { agentCallerEnv } from '../engine/job-common';
import { packageRoot, productVersion } from '../../version';
import { resolveBodyLimit } from '../bus/body-limit';
import { loadMcpConfig, resolveMcpScope, type McpFlags } from './mcp-scope';

/** Room for one bus_post of the largest allowed body, JSON-escaped (at worst 6 bytes a byte), plus the envelope. */
const stdioBufferFor = (maxBodyBytes: number) => maxBodyBytes * 6 + 1024 * 1024;

/** Resolves when stdin ends or a SIGINT/SIGTERM arrives (with its name). */
function untilClosed(transport: StdioServerTransport): Promise<string | undefined> {
  return new Promise((resolve) => {
    const done = (reason?: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(reason);
    };
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    process.stdin.once('end', () => done());
    transport.onclose = () => done();
  });
}

@Command({
  name: 'mcp',
  description:
    'Serve the Model Context Protocol over stdio (tools bus_post, bus_read, task_start, task_status, task_wait, task_stop, list_projects, list_tasks; ' +
    'bus and run-output resources). Scoped like `bus post`: flags, else the JRUN_* variables of the agent that starts it.',
})
export class McpCommand extends CommandRunner {
  constructor(
    @Inject(CHANGE_FEED) private readonly feed: ChangeFeed,
    @Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory,
    private readonly bus: MessageBusService,
  ) {
    super();
  }

  async run(_args: string[], flags: McpFlags = {}): Promise<void> {
    const scope = resolveMcpScope(flags, { env: process.env, cwd: process.cwd() });
    const loaded = loadMcpConfig(flags.config);
    const maxBodyBytes = resolveBodyLimit(undefined, { env: process.env, cwd: process.cwd() }, flags.config);
    const index = this.indexFor(scope.root);
    const starter = new DetachedJobStarter({ cli: join(packageRoot(), 'bin', 'run-agent'), layout: index.layout, config: loaded.config, configPath: loaded.path, env: agentCallerEnv(loaded) });
    const mcp = createConductorMcp({ scope, config: loaded.config, starter, version: productVersion(), maxBodyBytes, feed: this.feed, index, writers: this.bus.writers });
    const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: stdioBufferFor(maxBodyBytes) });
    const closed = untilClosed(transport);
    await mcp.server.connect(transport);
    await closed;
    // Sub-tasks run detached: a client that hangs up or a signal ends the session, never its tasks (task_stop stops them).
    await mcp.close();
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: the root of $JRUN_TASK_FOLDER, $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project ID; given, it confines the session: other projects are refused (default: from $JRUN_* or the working directory, not confining; none: tools take a project argument)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task ID: bus tools use its bus; given, it confines the session to this task, its descendant tasks and the tasks it starts (default: from $JRUN_*, not confining)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--run <id>', description: 'run ID stored in posted messages and made the parent of started tasks (default: $JRUN_RUN_FOLDER, run-info.yaml or $JRUN_ID)' })
  parseRun(v: string): string {
    return v;
  }

  @Option({ flags: '--config <file>', description: 'config file for started tasks (default: $CONDUCTOR_CONFIG, ./config.yaml, ./config.yml, ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }
}
