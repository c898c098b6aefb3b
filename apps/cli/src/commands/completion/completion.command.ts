import { Command, CommandRunner } from 'nest-commander';
import { UsageError } from '../../common/cli-errors';
import { CONDUCTOR_CLIENT_SUBCOMMANDS } from '../server/conductor-dispatch';
import { buildCompletionTree, rootOf, type CommandLike } from './completion-tree';
import { completionScript, SHELLS, type Shell } from './completion-scripts';

@Command({
  name: 'completion',
  arguments: '<shell>',
  description: `Print a shell completion script (${SHELLS.join('|')}) for this command, e.g. \`source <(run-agent completion bash)\``,
})
export class CompletionCommand extends CommandRunner {
  async run(params: string[]): Promise<void> {
    const shell = params[0];
    if (!(SHELLS as readonly string[]).includes(shell)) {
      throw new UsageError(`unsupported shell ${JSON.stringify(shell)} (expected ${SHELLS.join(', ')})`);
    }
    const root = rootOf(this.command as unknown as CommandLike);
    const program = root.name() || 'run-agent';
    // `conductor <sub>` answers the API-client subcommands with `server <sub>` (conductor-dispatch.ts).
    const remap = program === 'conductor' ? CONDUCTOR_CLIENT_SUBCOMMANDS.map((from) => ({ from, to: `server ${from}` })) : [];
    process.stdout.write(completionScript(buildCompletionTree(root, program, remap), shell as Shell));
  }
}
