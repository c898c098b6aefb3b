/**
 * The server's generated API key (issue #29, "a token by default"): when no key is configured the
 * server creates one on first start in the user's state folder, mode 0600, and reuses it; the CLI's
 * server clients read it from there. Plain module (node:fs, node:crypto): the CLI fast paths may import it.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, writeSync, fchmodSync } from 'node:fs';
import { join } from 'node:path';
import { homeDir } from './paths';

/** The user's state folder: $CONDUCTOR_STATE_DIR, else ~/.run-agent (also the daemon script's pid/log folder). */
export function conductorStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.CONDUCTOR_STATE_DIR?.trim();
  return dir ? dir : join(homeDir(env), '.run-agent');
}

/** `<state folder>/api-key`. */
export function apiKeyFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(conductorStateDir(env), 'api-key');
}

const KEY_TEXT = /^[A-Za-z0-9_-]{16,256}$/;

/**
 * Reads the key file: a regular file of ours (no symlink followed), holding one key. Undefined when
 * there is none; an Error naming the file for anything else (unreadable, foreign, garbage).
 */
export function readApiKeyFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new Error(`API key file ${file} is a symbolic link: refusing to use it`);
    throw new Error(`cannot read API key file ${file}: ${(err as Error).message}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`API key file ${file} is not a regular file`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new Error(`API key file ${file} belongs to another user: refusing to use it`);
    // other users of the machine must not read it: tighten a file that was loosened by hand
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    const key = readFileSync(fd, 'utf8').trim();
    if (!KEY_TEXT.test(key)) throw new Error(`API key file ${file} does not hold a key (expected 16-256 characters of A-Z a-z 0-9 _ -); delete it to have a new one generated`);
    return key;
  } finally {
    closeSync(fd);
  }
}

/** The saved key of this user (undefined when none was generated yet). */
export function savedApiKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return readApiKeyFile(apiKeyFilePath(env));
}

/**
 * The saved key, generated first when there is none: 32 random bytes (base64url), written with
 * O_EXCL and mode 0600 into a 0700 folder, so two servers starting at once end with one key.
 */
export function loadOrCreateApiKey(env: NodeJS.ProcessEnv = process.env): { key: string; file: string; created: boolean } {
  const file = apiKeyFilePath(env);
  const existing = readApiKeyFile(file);
  if (existing) return { key: existing, file, created: false };
  mkdirSync(conductorStateDir(env), { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64url');
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      const raced = readApiKeyFile(file);
      if (raced) return { key: raced, file, created: false };
    }
    throw new Error(`cannot create API key file ${file}: ${(err as Error).message}`);
  }
  try {
    writeSync(fd, `${key}\n`);
  } finally {
    closeSync(fd);
  }
  return { key, file, created: true };
}
