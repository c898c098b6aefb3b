import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import { makeTempDir } from './helpers/temp';

/** The fs module object itself (what the lib's named imports read from), for spying on its calls. */
const nodeFs: typeof import('node:fs') = require('node:fs');

describe('writeFileAtomic', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  it('replaces the target with mode 0644 from strings and buffers', () => {
    const path = join(tmp.dir, 'home-folders.md');
    writeFileAtomic(path, 'one\n');
    writeFileAtomic(path, Buffer.from('two\n'));
    expect(readFileSync(path, 'utf8')).toBe('two\n');
    expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(readdirSync(tmp.dir)).toEqual(['home-folders.md']);
  });

  it('names its temp file after the pattern and removes it on failure', () => {
    const path = join(tmp.dir, 'target');
    mkdirSync(join(path, 'blocker'), { recursive: true }); // non-empty dir: rename fails
    expect(() => writeFileAtomic(path, 'x', 'planner.*.yaml.tmp')).toThrow(expect.objectContaining({ code: 'IO' }));
    expect(readdirSync(tmp.dir)).toEqual(['target']);
  });

  it('gives each write a temp name of its own, after the pattern, created exclusively', () => {
    const path = join(tmp.dir, 'run-info.yaml');
    const open = jest.spyOn(nodeFs, 'openSync');
    try {
      for (let i = 0; i < 50; i++) writeFileAtomic(path, `v${i}\n`, 'run-info.*.yaml.tmp', { fsync: false });
      const temps = open.mock.calls.map(([file, flags]) => [String(file).slice(tmp.dir.length + 1), flags]);
      expect(temps).toHaveLength(50);
      for (const [name, flags] of temps) {
        expect(name).toMatch(new RegExp(`^run-info\\.${process.pid}-\\d+-\\d{8}\\.yaml\\.tmp$`));
        expect(flags).toBe('wx');
      }
      expect(new Set(temps.map(([name]) => name)).size).toBe(50);
    } finally {
      open.mockRestore();
    }
    expect(readFileSync(path, 'utf8')).toBe('v49\n');
    expect(readdirSync(tmp.dir)).toEqual(['run-info.yaml']);
  });

  it('fails with NOT_FOUND when the folder is missing and creates nothing', () => {
    expect(() => writeFileAtomic(join(tmp.dir, 'no', 'file'), 'x')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(readdirSync(tmp.dir)).toEqual([]);
  });
});
