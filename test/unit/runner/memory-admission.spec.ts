import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { admitByMemory, readMemAvailable } from '@app/runner';
import { formatByteSize, loadConfig, parseByteSize } from '@app/storage';
import { makeTempDir } from '../storage/helpers/temp';

describe('defaults.min_available_memory (issue #33)', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir('mem-config-');
    mkdirSync(join(tmp.dir, 'home'));
  });
  afterEach(() => tmp.cleanup());
  const load = (line: string) => {
    const path = join(tmp.dir, 'config.yaml');
    writeFileSync(path, `agents:\n  claude: {}\ndefaults:\n  timeout: 300\n${line}`);
    return loadConfig(path, { env: { HOME: join(tmp.dir, 'home') } });
  };

  it('is read as bytes from a size text; unset and 0 mean off', () => {
    expect(load('  min_available_memory: 2GiB\n').defaults.min_available_memory).toBe(2 * 1024 ** 3);
    expect(load('  min_available_memory: 512MiB\n').defaults.min_available_memory).toBe(512 * 1024 ** 2);
    expect(load('  min_available_memory: 4096\n').defaults.min_available_memory).toBe(4096);
    expect(load('  min_available_memory: 0\n').defaults.min_available_memory).toBeUndefined();
    expect(load('').defaults.min_available_memory).toBeUndefined();
  });

  it('a bad value fails the load with file:line:col: key: problem', () => {
    const path = join(tmp.dir, 'config.yaml');
    expect(() => load('  min_available_memory: lots\n')).toThrow(`${path}:5:3: defaults.min_available_memory: must be a size like 2GiB or 512MiB (0 = off), got "lots"`);
    expect(() => load('  min_available_memory: -1GiB\n')).toThrow(/defaults\.min_available_memory/);
    expect(() => load('  min_available_memory: 2 parsecs\n')).toThrow(/defaults\.min_available_memory/);
  });

  it('sizes parse 1024-based and format back', () => {
    expect(parseByteSize('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('10kb')).toBe(10240);
    expect(() => parseByteSize('')).toThrow('must be a size like 2GiB');
    expect(formatByteSize(1536 * 1024 ** 2)).toBe('1.5 GiB');
    expect(formatByteSize(100)).toBe('100 B');
  });
});

describe('admitByMemory', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir('meminfo-')));
  afterEach(() => tmp.cleanup());
  const meminfo = (kb: number): string => {
    const path = join(tmp.dir, 'meminfo');
    writeFileSync(path, `MemTotal:       16000000 kB\nMemFree:          100000 kB\nMemAvailable:   ${kb} kB\n`);
    return path;
  };

  it('reads MemAvailable in bytes; a file without it is an error', () => {
    expect(readMemAvailable(meminfo(2048))).toBe(2048 * 1024);
    writeFileSync(join(tmp.dir, 'bad'), 'MemTotal: 1 kB\n');
    expect(() => readMemAvailable(join(tmp.dir, 'bad'))).toThrow('no MemAvailable line');
  });

  it('admits at once when enough is available or no floor is set, posting nothing', async () => {
    const posts: string[] = [];
    const post = async (type: string, body: string) => void posts.push(`${type} ${body}`);
    await admitByMemory({ floor: 1024 * 1024, env: { CONDUCTOR_MEMINFO_PATH: meminfo(1024) }, post });
    await admitByMemory({ floor: undefined, env: { CONDUCTOR_MEMINFO_PATH: join(tmp.dir, 'missing') }, post });
    expect(posts).toEqual([]);
  });

  it('fails closed when a floor is set and MemAvailable cannot be read', async () => {
    await expect(admitByMemory({ floor: 1, env: { CONDUCTOR_MEMINFO_PATH: join(tmp.dir, 'missing') }, post: async () => undefined })).rejects.toThrow(
      'min_available_memory is set but MemAvailable cannot be read',
    );
  });

  it('a wait ends with an error when aborted', async () => {
    const ctl = new AbortController();
    const posts: string[] = [];
    const waiting = admitByMemory({
      floor: 2 * 1024 ** 3,
      env: { CONDUCTOR_MEMINFO_PATH: meminfo(1024 * 1024) },
      pollMs: 10,
      signal: ctl.signal,
      post: async (type, body) => {
        posts.push(`${type} ${body}`);
        ctl.abort('stopped by test');
      },
    });
    await expect(waiting).rejects.toThrow('stopped while waiting for memory: stopped by test');
    expect(posts).toEqual(['INFO waiting for memory: available 1 GiB < floor 2 GiB (defaults.min_available_memory)']);
  });
});
