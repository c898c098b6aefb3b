import { accessSync, chmodSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Names of the fake agent executables in {@link fakeAgentsBinDir}. */
export const FAKE_AGENT_NAMES = ['claude', 'codex', 'gemini', 'fake-command-agent'] as const;
export type FakeAgentName = (typeof FAKE_AGENT_NAMES)[number];

const BIN_DIR = join(__dirname, '..', 'fixtures', 'agents');

/**
 * Folder holding the fake `claude`, `codex`, `gemini` and `fake-command-agent` executables
 * (real node scripts; behaviour scripted with FAKE_AGENT_* variables, see its README.md).
 */
export function fakeAgentsBinDir(): string {
  for (const name of FAKE_AGENT_NAMES) {
    const file = join(BIN_DIR, name);
    try {
      accessSync(file, constants.X_OK);
    } catch {
      // A checkout that lost the executable bit (e.g. an archive) would make every test fail obscurely.
      chmodSync(file, 0o755);
    }
  }
  return BIN_DIR;
}

export function fakeAgentPath(name: FakeAgentName): string {
  return join(fakeAgentsBinDir(), name);
}

/**
 * A copy of the current environment with the fake agents first on PATH, plus `extra` (which wins;
 * an `undefined` value removes the variable). Real agent keys are dropped so tests never reach a
 * real service.
 */
export function envWithFakeAgents(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^FAKE_AGENT_/.test(key)) env[key] = value;
  }
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'PERPLEXITY_API_KEY', 'XAI_API_KEY', 'CLAUDECODE']) delete env[key];
  env.PATH = [fakeAgentsBinDir(), ...(env.PATH ?? '').split(delimiter).filter((d) => d !== '' && d !== BIN_DIR)].join(delimiter);
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}
