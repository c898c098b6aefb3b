import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@app/storage';
import { makeTempDir } from './helpers/temp';

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

  it('fails with NOT_FOUND when the folder is missing and creates nothing', () => {
    expect(() => writeFileAtomic(join(tmp.dir, 'no', 'file'), 'x')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(readdirSync(tmp.dir)).toEqual([]);
  });
});
