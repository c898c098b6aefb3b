import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, resolveRootSetting, runFolderAbove } from '@app/storage';
import { resolveBusRoot, scopeFromCwdRunInfo } from '../../../apps/cli/src/commands/bus/bus-scope';
import { writeRun } from '../../utils/run-fixtures';

describe('bus post/read runs root: the one settings resolver (D8)', () => {
  let dir: string;
  let home: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bus-scope-'));
    home = join(dir, 'home');
    mkdirSync(home);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const resolver = (flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string) =>
    resolveRootSetting({ flag, env, cwd, taskFolder: true, load: (path, e) => loadConfig(path, { strict: false, env: e }) });

  it('agrees with resolveRootSetting for every source, in its order', () => {
    const cwd = join(dir, 'work');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'config.yaml'), `storage:\n  runs_dir: ${join(dir, 'from-config')}\n`);
    writeFileSync(join(dir, 'other.yaml'), `storage:\n  runs_dir: ${join(dir, 'from-env-config')}\n`);
    const cases: Array<[string | undefined, NodeJS.ProcessEnv, string]> = [
      [join(dir, 'flag'), { HOME: home, JRUN_TASK_FOLDER: join(dir, 'r', 'p', 't'), CONDUCTOR_ROOT: join(dir, 'env') }, join(dir, 'flag')],
      [undefined, { HOME: home, JRUN_TASK_FOLDER: join(dir, 'r', 'p', 't'), CONDUCTOR_ROOT: join(dir, 'env') }, join(dir, 'r')],
      [undefined, { HOME: home, CONDUCTOR_ROOT: join(dir, 'env') }, join(dir, 'env')],
      [undefined, { HOME: home, RUN_AGENT_ROOT: join(dir, 'env2') }, join(dir, 'env2')],
      [undefined, { HOME: home }, join(dir, 'from-config')],
      [undefined, { HOME: home, CONDUCTOR_CONFIG: join(dir, 'other.yaml') }, join(dir, 'from-env-config')],
    ];
    for (const [flag, env, want] of cases) {
      expect(resolveBusRoot(flag, { env, cwd })).toBe(want);
      expect(resolveBusRoot(flag, { env, cwd })).toBe(resolver(flag, env, cwd));
    }
    // no flag, variable or config file: the default under HOME
    expect(resolveBusRoot(undefined, { env: { HOME: home }, cwd: dir })).toBe(join(home, '.run-agent', 'runs'));
  });

  it('words a broken config file as every command does', () => {
    writeFileSync(join(dir, 'config.yaml'), 'storage: [\n');
    const env = { HOME: home };
    expect(() => resolveBusRoot(undefined, { env, cwd: dir })).toThrow(/^resolve runs dir: /);
    expect(() => resolveBusRoot(undefined, { env, cwd: dir })).toThrow(((): string => {
      try {
        resolver(undefined, env, dir);
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    })());
  });

  it('finds the run folder above the working directory without parsing YAML first', () => {
    const runDir = writeRun(join(dir, 'runs'), 'proj', 'task-20260101-000000-abc', 'r1');
    const deep = join(runDir, 'a', 'b');
    mkdirSync(deep, { recursive: true });
    expect(runFolderAbove(deep)).toBe(runDir);
    expect(runFolderAbove(home)).toBeUndefined();
    expect(scopeFromCwdRunInfo(deep)).toMatchObject({ project: 'proj', task: 'task-20260101-000000-abc' });
    expect(scopeFromCwdRunInfo(home)).toEqual({});
  });
});
