import { dirname } from 'node:path';
import type { AgentConfig, AppConfig, SandboxMode } from '@app/storage';
import { bwrapArgs, SandboxSpawn, toolchainDir } from './bwrap-argv';
import { checkSandboxCached } from './availability';

/** A sandbox that cannot start: the run fails with this one line and never starts unconfined. */
export class SandboxUnavailableError extends Error {
  constructor(reason: string) {
    super(`sandbox bwrap unavailable: ${reason}; the agent was not started (set sandbox: none to run it unconfined)`);
    this.name = 'SandboxUnavailableError';
  }
}

/** The agent's own `sandbox`, else `defaults.sandbox`, else `none`. */
export function sandboxModeFor(config: AppConfig | undefined, agent: Pick<AgentConfig, 'sandbox'> | undefined): SandboxMode {
  return agent?.sandbox ?? config?.defaults?.sandbox ?? 'none';
}

export interface SandboxRequest {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  taskDir: string;
  runsRoot: string;
  /** Folder of `run-agent` (its package is exposed read-only). */
  binDir?: string;
  config?: AppConfig;
}

/**
 * The command line that runs the agent inside bwrap. Throws SandboxUnavailableError when bwrap is
 * missing or cannot create namespaces here (fail closed).
 */
export function sandboxedCommand(req: SandboxRequest): { command: string; args: string[] } {
  const check = checkSandboxCached(req.env);
  if (!check.ok) throw new SandboxUnavailableError(check.reason);
  const cfg = req.config?.sandbox;
  const readPaths = [dirname(process.execPath), toolchainDir(req.command)];
  if (req.binDir) readPaths.push(dirname(req.binDir));
  const spawn: SandboxSpawn = {
    command: req.command,
    args: req.args,
    cwd: req.cwd,
    taskDir: req.taskDir,
    runsRoot: req.runsRoot,
    home: req.env.HOME,
    homeRead: cfg?.home_read,
    homeWrite: cfg?.home_write,
    readPaths,
    maxProcesses: cfg?.max_processes,
  };
  return { command: check.bwrap, args: bwrapArgs(spawn) };
}
