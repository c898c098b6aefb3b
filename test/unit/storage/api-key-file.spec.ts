import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKeyFilePath, loadOrCreateApiKey, savedApiKey } from '@app/storage';

describe('the generated API key file (issue #29)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'api-key-file-'));
    env = { HOME: join(dir, 'home'), CONDUCTOR_STATE_DIR: join(dir, 'state') };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lives in $CONDUCTOR_STATE_DIR, else ~/.run-agent', () => {
    expect(apiKeyFilePath(env)).toBe(join(dir, 'state', 'api-key'));
    expect(apiKeyFilePath({ HOME: '/h' })).toBe('/h/.run-agent/api-key');
  });

  it('is created 0600 in a 0700 folder once, then reused', () => {
    expect(savedApiKey(env)).toBeUndefined();
    const first = loadOrCreateApiKey(env);
    expect(first.created).toBe(true);
    expect(first.key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'state')).mode & 0o777).toBe(0o700);
    expect(loadOrCreateApiKey(env)).toEqual({ key: first.key, file: first.file, created: false });
    expect(savedApiKey(env)).toBe(first.key);
  });

  it('tightens a file others could read, and refuses symlinks and garbage', () => {
    mkdirSync(join(dir, 'state'));
    const file = join(dir, 'state', 'api-key');
    writeFileSync(file, 'a-key-of-twenty-chars\n');
    chmodSync(file, 0o644);
    expect(savedApiKey(env)).toBe('a-key-of-twenty-chars');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, 'short\n');
    expect(() => loadOrCreateApiKey(env)).toThrow(/does not hold a key/);
    expect(readFileSync(file, 'utf8')).toBe('short\n');
    rmSync(file);
    writeFileSync(join(dir, 'elsewhere'), 'a-key-of-twenty-chars\n');
    symlinkSync(join(dir, 'elsewhere'), file);
    expect(() => loadOrCreateApiKey(env)).toThrow(/is a symbolic link/);
  });
});
