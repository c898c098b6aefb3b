import { resolve } from 'node:path';
import { Command, CommandRunner, Option } from 'nest-commander';
import { checkAgent, checkAgentEndpoint, checkRootDir, checkTokenSource, formatAgentCheck } from '@app/agents';
import { AppConfig, configFileFor, loadConfig, pathExists, resolveRunsRoot } from '@app/storage';
import { checkSandbox, sandboxModeFor } from '@app/sandbox';
import { UsageError } from '../../common/cli-errors';

interface ValidateOptions {
  config?: string;
  root?: string;
  agent?: string;
  checkNetwork?: boolean;
  checkTokens?: boolean;
}

@Command({
  name: 'validate',
  description: 'Check the configuration, the agent CLIs on PATH (with versions), tokens and the runs root; exit 1 on any warning',
})
export class ValidateCommand extends CommandRunner {
  async run(_params: string[], options: ValidateOptions = {}): Promise<void> {
    const env = process.env;
    const out: string[] = ['Conductor Loop Configuration Validator\n', '\n'];
    const write = (s: string) => out.push(s);
    let failed = false;

    const found = configFileFor(options.config, { env });
    const configPath = found ? resolve(found) : undefined;
    if (options.config?.trim() && !pathExists(configPath!)) throw new UsageError(`config file not found: ${configPath}`);
    write(configPath ? `Config: ${configPath}\n` : 'Config: (not found)\n');

    let cfg: AppConfig | undefined;
    let configError: string | undefined;
    if (configPath) {
      try {
        cfg = loadConfig(configPath, { strict: false, env });
        // The strict load is what task/job use: report the problem they would stop on.
        loadConfig(configPath, { strict: true, env });
      } catch (err) {
        configError = (err as Error).message;
      }
    }

    // D8: the same root every command uses. Only an explicitly chosen root must already exist.
    const explicitRoot = !!(options.root?.trim() || env.CONDUCTOR_ROOT?.trim() || env.RUN_AGENT_ROOT?.trim());
    const root = resolveRunsRoot({ flag: options.root?.trim() || undefined, env, config: cfg });
    write(`Root:   ${root}\n\n`);
    const rootExists = pathExists(root);
    if (rootExists || explicitRoot) {
      const problem = checkRootDir(root);
      if (problem) {
        write(`Root: FAIL (${problem})\n\n`);
        failed = true;
      } else {
        write('Root: OK\n\n');
      }
    } else {
      write('Root: not created yet (created by the first run)\n\n');
    }

    if (configError) {
      write(`Config: FAIL\n  ${configError}\n\n`);
      failed = true;
    }

    const filter = options.agent?.trim() ?? '';
    let names: string[] = [];
    if (cfg) {
      names = Object.keys(cfg.agents).filter((n) => filter === '' || n === filter).sort();
      if (names.length === 0) {
        if (filter) {
          write(`Agents: (agent ${JSON.stringify(filter)} not found in config)\n`);
          failed = true;
        } else {
          write('Agents: (none configured)\n');
        }
      } else {
        write('Agents:\n');
        let ok = 0;
        let warn = 0;
        for (const name of names) {
          const result = await checkAgent(cfg.agents[name], { skipTokenCheck: !!options.checkTokens, env });
          write(formatAgentCheck(result));
          if (result.ok) ok++;
          else warn++;
        }
        if (warn > 0) failed = true;
        write(`\nValidation: ${ok} OK, ${warn} WARNING\n`);
      }
    } else if (filter) {
      write(`Agents: (no config loaded, cannot validate agent ${JSON.stringify(filter)})\n`);
    } else {
      write('Agents: (no config loaded)\n');
    }

    // docs/sandbox.md: whether `sandbox: bwrap` can run here; a failure matters only when an agent uses it
    const sandbox = checkSandbox(env);
    const wanted = cfg ? Object.values(cfg.agents).some((a) => sandboxModeFor(cfg, a) === 'bwrap') || Object.values(cfg.projects ?? {}).some((p) => p.sandbox === 'bwrap') : false;
    write(sandbox.ok ? `\nSandbox: OK (bwrap ${sandbox.bwrap})\n` : `\nSandbox: ${wanted ? 'FAIL' : 'unavailable'} (${sandbox.reason})\n`);
    if (!sandbox.ok && wanted) failed = true;

    if (options.checkTokens && cfg && names.length > 0) {
      write('\nToken checks:\n');
      for (const name of names) {
        const { desc, ok } = checkTokenSource(cfg.agents[name], env);
        write(`  Agent ${`${name}:`.padEnd(14)} ${desc}\n`);
        if (!ok) failed = true;
      }
    }

    if (options.checkNetwork && cfg && names.length > 0) {
      write('\nNetwork checks:\n');
      for (const name of names) {
        const result = await checkAgentEndpoint(cfg.agents[name]);
        if (!result) continue;
        write(`  Agent ${`${name}:`.padEnd(14)} ${result.url} ${result.ok ? 'reachable' : `UNREACHABLE (${result.error})`}\n`);
        if (!result.ok) failed = true;
      }
    }
    process.stdout.write(out.join(''));
    // Fail closed, as every command that reads the config: exit 2, the one line naming file, line and key.
    if (configError) throw new UsageError(configError);
    if (failed) throw new Error('validation completed with warnings');
  }

  @Option({ flags: '--config <path>', description: 'config file to check (default: ./config.yaml, ./config.yml, then ~/.run-agent/conductor-loop.hcl)' })
  parseConfig(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root to check for existence and write access (default: the resolved runs root)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--agent <name>', description: 'check only the agent with this config name (default: all agents)' })
  parseAgent(v: string): string {
    return v;
  }

  @Option({ flags: '--check-network', description: 'REST agents (perplexity, xai): check that the API endpoint answers HTTP (any status counts; 5 s timeout)' })
  parseCheckNetwork(): boolean {
    return true;
  }

  @Option({ flags: '--check-tokens', description: 'inspect token sources instead of the basic token check: inline token, token_file readable and non-empty, or env var set' })
  parseCheckTokens(): boolean {
    return true;
  }
}
