import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { StorageError } from '../storage.errors';

/** The user's home folder: $HOME when set (tests point it elsewhere), else the OS answer. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && env.HOME.trim() !== '' ? env.HOME : homedir();
}

/** Expands `~` / `~/…`; `~user` is refused as upstream does. */
export function expandHome(path: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!path.startsWith('~')) return path;
  if (path === '~') return homeDir(env);
  if (path.startsWith('~/')) return join(homeDir(env), path.slice(2));
  throw new StorageError('INVALID_CONFIG', `unsupported home expansion: ${JSON.stringify(path)}`);
}

/** `~` expansion, then relative paths resolved against `baseDir` (the config file's folder). */
export function resolveConfigPath(path: string, baseDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const trimmed = path.trim();
  if (trimmed === '') return '';
  const expanded = expandHome(trimmed, env);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(baseDir, expanded);
}

/** The home config location upstream uses. Read if present, never created (D8). */
export function homeConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), '.run-agent', 'conductor-loop.hcl');
}

/** First existing of ./config.yaml, ./config.yml (relative to `cwd`), ~/.run-agent/conductor-loop.hcl. */
export function findConfigFile(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [join(cwd, 'config.yaml'), join(cwd, 'config.yml'), homeConfigPath(env)];
  return candidates.find((p) => {
    try {
      return statSync(p).isFile();
    } catch {
      return false;
    }
  });
}

