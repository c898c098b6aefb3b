import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { installShellAliases, uninstallShellAliases } from '@app/runner';
import { UsageError } from '../../common/cli-errors';

interface ShellSetupOptions {
  shell?: string;
  rcFile?: string;
  runAgentBin?: string;
}

function normalizeShell(value: string | undefined): 'zsh' | 'bash' | undefined {
  const name = basename((value ?? '').trim().toLowerCase().replace(/^-/, ''));
  return name === 'zsh' || name === 'bash' ? name : undefined;
}

/** The rc file to edit and the label printed for it: --rc-file, else --shell, else $SHELL. */
export function resolveRcFile(opts: ShellSetupOptions, env: NodeJS.ProcessEnv = process.env): { path: string; shell: string } {
  const home = (): string => env.HOME?.trim() || homedir();
  const rc = opts.rcFile?.trim();
  if (rc) {
    const path = rc === '~' ? home() : rc.startsWith('~/') ? join(home(), rc.slice(2)) : rc;
    return { path, shell: 'custom' };
  }
  let shell: 'zsh' | 'bash' | undefined;
  if (opts.shell?.trim()) {
    shell = normalizeShell(opts.shell);
    if (!shell) throw new UsageError(`unsupported shell ${JSON.stringify(opts.shell)} (expected zsh or bash)`);
  } else {
    shell = normalizeShell(env.SHELL);
    if (!shell) throw new UsageError('could not infer shell from SHELL; use --shell or --rc-file');
  }
  return { path: join(home(), shell === 'zsh' ? '.zshrc' : '.bashrc'), shell };
}

const SHELL_FLAG = { flags: '--shell <name>', description: 'zsh or bash: edits ~/.zshrc or ~/.bashrc (default: from $SHELL)' };
const RC_FLAG = { flags: '--rc-file <path>', description: 'edit this file instead (overrides --shell; ~ is expanded)' };

@SubCommand({ name: 'install', description: 'Add (or refresh) the managed block aliasing claude, codex and gemini to "run-agent wrap"' })
export class ShellSetupInstallCommand extends CommandRunner {
  async run(_params: string[], options: ShellSetupOptions = {}): Promise<void> {
    const bin = options.runAgentBin?.trim() || 'run-agent';
    if (/['"\s]/.test(bin)) throw new UsageError('run-agent-bin must be a single shell token without whitespace or quotes');
    const { path, shell } = resolveRcFile(options);
    if (!installShellAliases(path, bin)) {
      process.stdout.write(`shell aliases already installed in ${path}\n`);
      return;
    }
    process.stdout.write(`installed shell aliases in ${path} (${shell})\nrun \`source ${path}\` or open a new shell session to apply changes\n`);
  }

  @Option(SHELL_FLAG)
  parseShell(v: string): string {
    return v;
  }

  @Option(RC_FLAG)
  parseRcFile(v: string): string {
    return v;
  }

  @Option({ flags: '--run-agent-bin <cmd>', description: 'run-agent command used in the aliases, one shell token (default: run-agent)' })
  parseRunAgentBin(v: string): string {
    return v;
  }
}

@SubCommand({ name: 'uninstall', description: 'Remove the managed alias block' })
export class ShellSetupUninstallCommand extends CommandRunner {
  async run(_params: string[], options: ShellSetupOptions = {}): Promise<void> {
    const { path, shell } = resolveRcFile(options);
    if (!uninstallShellAliases(path)) {
      process.stdout.write(`shell aliases are already absent in ${path}\n`);
      return;
    }
    process.stdout.write(`removed shell aliases from ${path} (${shell})\n`);
  }

  @Option(SHELL_FLAG)
  parseShell(v: string): string {
    return v;
  }

  @Option(RC_FLAG)
  parseRcFile(v: string): string {
    return v;
  }
}

@Command({
  name: 'shell-setup',
  description: 'Install or remove shell aliases that run claude/codex/gemini through "run-agent wrap"',
  subCommands: [ShellSetupInstallCommand, ShellSetupUninstallCommand],
})
export class ShellSetupCommand extends CommandRunner {
  async run(params: string[]): Promise<void> {
    throw new UsageError(params.length ? `unknown shell-setup command ${JSON.stringify(params[0])}: use install or uninstall` : 'missing command: use "shell-setup install" or "shell-setup uninstall"');
  }
}
