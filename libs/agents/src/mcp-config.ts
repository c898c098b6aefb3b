import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** How the agent reaches our MCP server: `run-agent mcp` scoped to the run. */
export interface McpServerLaunch {
  /** Absolute path of the run-agent executable. */
  runAgentPath: string;
  root: string;
  projectId: string;
  taskId: string;
  runId: string;
}

export interface McpAgentSetup {
  /** The agent's full argument list with the MCP arguments added. */
  args: string[];
  /** Variables added to the agent's environment. */
  env: Record<string, string>;
  /** The config file written into the run folder. */
  file: string;
}

export const MCP_SERVER_KEY = 'conductor';

function serverArgs(l: McpServerLaunch): string[] {
  return ['mcp', '--root', l.root, '--project', l.projectId, '--task', l.taskId, '--run', l.runId];
}

const tomlString = (s: string) => JSON.stringify(s);

/**
 * Opt-in (`mcp: true` on an agent): writes the agent CLI's MCP configuration naming
 * `run-agent mcp` into the run folder and returns how to point the CLI at it. claude reads
 * `--mcp-config <file>`; gemini reads a settings file named by GEMINI_CLI_SYSTEM_SETTINGS_PATH;
 * codex takes `-c mcp_servers.<name>.…` overrides (its config.toml lives in CODEX_HOME, which
 * also holds its login, so the file written here is a record of the same settings).
 * Undefined for agent types without MCP support.
 */
export function setupAgentMcp(type: string, baseArgs: readonly string[], runDir: string, launch: McpServerLaunch): McpAgentSetup | undefined {
  const server = { command: launch.runAgentPath, args: serverArgs(launch) };
  switch (type) {
    case 'claude': {
      const file = join(runDir, 'mcp-config.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { [MCP_SERVER_KEY]: { type: 'stdio', ...server } } }, null, 2) + '\n', { mode: 0o644 });
      return { args: [...baseArgs, '--mcp-config', file], env: {}, file };
    }
    case 'gemini': {
      const file = join(runDir, 'gemini-settings.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { [MCP_SERVER_KEY]: server } }, null, 2) + '\n', { mode: 0o644 });
      return { args: [...baseArgs], env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: file }, file };
    }
    case 'codex': {
      const file = join(runDir, 'codex-mcp.toml');
      const command = tomlString(server.command);
      const args = `[${server.args.map(tomlString).join(', ')}]`;
      writeFileSync(file, `[mcp_servers.${MCP_SERVER_KEY}]\ncommand = ${command}\nargs = ${args}\n`, { mode: 0o644 });
      // before the trailing `-` (prompt on stdin) of codex exec
      const overrides = ['-c', `mcp_servers.${MCP_SERVER_KEY}.command=${command}`, '-c', `mcp_servers.${MCP_SERVER_KEY}.args=${args}`];
      const stdinMarker = baseArgs.at(-1) === '-';
      return { args: stdinMarker ? [...baseArgs.slice(0, -1), ...overrides, '-'] : [...baseArgs, ...overrides], env: {}, file };
    }
    default:
      return undefined;
  }
}
