import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { UsageError } from '../../common/cli-errors';

export const BLOCK_START = '# >>> conductor-loop shell aliases (managed by run-agent shell-setup) >>>';
export const BLOCK_END = '# <<< conductor-loop shell aliases (managed by run-agent shell-setup) <<<';
const AGENTS = ['claude', 'codex', 'gemini'];

interface ShellSetupOptions {
  shell?: string;
  rcFile?: string;
  runAgentBin?: string;
}

export function buildBlock(bin: string): string {
  return [
    BLOCK_START,
    '# Safe opt-in: aliases are installed only when this command is run explicitly.',
    '# Remove with: run-agent shell-setup uninstall',
    ...AGENTS.map((a) => `alias ${a}='${bin} wrap --agent ${a} --'`),
    BLOCK_END,
    '',
  ].join('\n');
}

function locateBlock(content: string): { start: number; end: number } | undefined {
  const start = content.indexOf(BLOCK_START);
  if (start < 0) return undefined;
  const endMarker = content.indexOf(BLOCK_END, start);
  if (endMarker < 0) throw new Error('found shell-setup start marker without end marker');
  let end = endMarker + BLOCK_END.length;
  if (content[end] === '\n') end++;
  return { start, end };
}

/** Replaces the managed block, or appends it after a blank line. */
export function installBlock(content: string, block: string): string {
  const found = locateBlock(content);
  if (found) return content.slice(0, found.start) + block + content.slice(found.end);
  let base = content;
  if (base !== '' && !base.endsWith('\n')) base += '\n';
  if (base !== '' && !base.endsWith('\n\n')) base += '\n';
  return base + block;
}

/** Removes the managed block and the newline before it; undefined when there is none. */
export function uninstallBlock(content: string): string | undefined {
  const found = locateBlock(content);
  if (!found) return undefined;
  const start = found.start > 0 && content[found.start - 1] === '\n' ? found.start - 1 : found.start;
  return content.slice(0, start) + content.slice(found.end);
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

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new Error(`read ${path}: ${(err as Error).message}`);
  }
}

const SHELL_FLAG = { flags: '--shell <name>', description: 'zsh or bash: edits ~/.zshrc or ~/.bashrc (default: from $SHELL)' };
const RC_FLAG = { flags: '--rc-file <path>', description: 'edit this file instead (overrides --shell; ~ is expanded)' };

@SubCommand({ name: 'install', description: 'Add (or refresh) the managed block aliasing claude, codex and gemini to "run-agent wrap"' })
export class ShellSetupInstallCommand extends CommandRunner {
  async run(_params: string[], options: ShellSetupOptions = {}): Promise<void> {
    const bin = options.runAgentBin?.trim() || 'run-agent';
    if (/['"\s]/.test(bin)) throw new UsageError('run-agent-bin must be a single shell token without whitespace or quotes');
    const { path, shell } = resolveRcFile(options);
    const current = readOptional(path);
    const updated = installBlock(current, buildBlock(bin));
    if (updated === current) {
      process.stdout.write(`shell aliases already installed in ${path}\n`);
      return;
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, updated);
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
    const updated = uninstallBlock(readOptional(path));
    if (updated === undefined) {
      process.stdout.write(`shell aliases are already absent in ${path}\n`);
      return;
    }
    writeFileSync(path, updated);
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
