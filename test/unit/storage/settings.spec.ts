import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  configFileFor,
  DEFAULT_API_PORT,
  DEFAULT_SERVER_URL,
  loadConfig,
  loadDefaultConfig,
  resolveApiKeySetting,
  resolveHostSetting,
  resolvePortSetting,
  resolveRootSetting,
  taskFolderRoot,
} from '@app/storage';

describe('settings resolver (flags → env → config → defaults)', () => {
  let dir: string;
  let home: string;
  let cwd: string;
  const load = (path: string, env: NodeJS.ProcessEnv) => loadConfig(path, { strict: false, env });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'settings-'));
    home = join(dir, 'home');
    cwd = join(dir, 'cwd');
    mkdirSync(home);
    mkdirSync(cwd);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function writeConfig(path: string, runsDir: string, extra = ''): string {
    writeFileSync(path, `storage:\n  runs_dir: ${runsDir}\n${extra}`);
    return path;
  }

  it('config file: --config, then $CONDUCTOR_CONFIG, then ./config.yaml, then none', () => {
    const env = { HOME: home };
    expect(configFileFor(undefined, { env, cwd })).toBeUndefined();
    const local = writeConfig(join(cwd, 'config.yaml'), '/x');
    expect(configFileFor(undefined, { env, cwd })).toBe(local);
    expect(configFileFor(undefined, { env: { ...env, CONDUCTOR_CONFIG: ' /named.yaml ' }, cwd })).toBe('/named.yaml');
    expect(configFileFor(' /flag.yaml', { env: { ...env, CONDUCTOR_CONFIG: '/named.yaml' }, cwd })).toBe('/flag.yaml');
  });

  it('runs root: flag, task folder, env, the config in use, default — in that order', () => {
    const named = writeConfig(join(dir, 'named.yaml'), join(dir, 'from-named'));
    writeConfig(join(cwd, 'config.yaml'), join(dir, 'from-local'));
    const base = { HOME: home };
    const root = (flag: string | undefined, env: NodeJS.ProcessEnv, configFlag?: string) =>
      resolveRootSetting({ flag, configFlag, env, cwd, taskFolder: true, load });
    expect(root(undefined, base)).toBe(join(dir, 'from-local'));
    expect(root(undefined, { ...base, CONDUCTOR_CONFIG: named })).toBe(join(dir, 'from-named'));
    expect(root(undefined, base, named)).toBe(join(dir, 'from-named'));
    expect(root(undefined, { ...base, RUN_AGENT_ROOT: join(dir, 'rar') })).toBe(join(dir, 'rar'));
    expect(root(undefined, { ...base, RUN_AGENT_ROOT: join(dir, 'rar'), CONDUCTOR_ROOT: join(dir, 'cr') })).toBe(join(dir, 'cr'));
    const taskFolder = join(dir, 'tf-root', 'proj', 'task-1');
    expect(root(undefined, { ...base, CONDUCTOR_ROOT: join(dir, 'cr'), JRUN_TASK_FOLDER: taskFolder })).toBe(join(dir, 'tf-root'));
    expect(root('rel', { ...base, JRUN_TASK_FOLDER: taskFolder })).toBe(join(cwd, 'rel'));
    expect(taskFolderRoot({ JRUN_TASK_FOLDER: taskFolder })).toBe(join(dir, 'tf-root'));
    rmSync(join(cwd, 'config.yaml'));
    expect(root(undefined, base)).toBe(join(home, '.run-agent', 'runs'));
  });

  it('a broken config is read only when nothing else decides, and then names the cause', () => {
    writeFileSync(join(cwd, 'config.yaml'), 'storage: [unclosed\n');
    const env = { HOME: home };
    expect(resolveRootSetting({ flag: join(dir, 'r'), env, cwd, load })).toBe(join(dir, 'r'));
    expect(() => resolveRootSetting({ env, cwd, load })).toThrow(/^resolve runs dir: /);
  });

  it('loadDefaultConfig honours $CONDUCTOR_CONFIG', () => {
    const named = writeConfig(join(dir, 'named.yaml'), join(dir, 'from-named'));
    expect(loadDefaultConfig(cwd, { HOME: home })).toBeUndefined();
    expect(loadDefaultConfig(cwd, { HOME: home, CONDUCTOR_CONFIG: named })?.storage.runs_dir).toBe(join(dir, 'from-named'));
  });

  it('host, port and API key: flag → env → config → default', () => {
    const config = loadConfig(writeConfig(join(dir, 'c.yaml'), '/r', 'api:\n  host: 0.0.0.0\n  port: 9000\n  auth_enabled: true\n  api_key: cfg-key\n'), { strict: false, env: { HOME: home } });
    expect(resolvePortSetting(undefined, undefined, undefined)).toBe(DEFAULT_API_PORT);
    expect(DEFAULT_API_PORT).toBe(14355);
    expect(DEFAULT_SERVER_URL).toBe('http://localhost:14355');
    expect(resolvePortSetting(undefined, undefined, config)).toBe(9000);
    expect(resolvePortSetting(undefined, 8000, config)).toBe(8000);
    expect(resolvePortSetting(0, 8000, config)).toBe(0);
    expect(resolveHostSetting(undefined, {}, undefined)).toBe('127.0.0.1');
    expect(resolveHostSetting(undefined, {}, config)).toBe('0.0.0.0');
    expect(resolveHostSetting(undefined, { CONDUCTOR_HOST: '::1' }, config)).toBe('::1');
    expect(resolveHostSetting('localhost', { CONDUCTOR_HOST: '::1' }, config)).toBe('localhost');
    expect(resolveApiKeySetting(undefined, {}, config)).toEqual({ apiKey: 'cfg-key', missing: false });
    expect(resolveApiKeySetting(undefined, { CONDUCTOR_API_KEY: 'env-key' }, config)).toEqual({ apiKey: 'env-key', missing: false });
    expect(resolveApiKeySetting('flag-key', { CONDUCTOR_API_KEY: 'env-key' }, config)).toEqual({ apiKey: 'flag-key', missing: false });
    const noKey = { ...config, api: { ...config.api, api_key: '' } };
    expect(resolveApiKeySetting(undefined, {}, noKey)).toEqual({ missing: true });
    expect(resolveApiKeySetting(undefined, {}, undefined)).toEqual({ missing: false });
  });
});
