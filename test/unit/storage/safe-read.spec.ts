import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkRealPathInside, FileTail, openRegularFile, readRecordText, readRegularFileCapped, type ChangeFeed } from '@app/storage';

/** Issue #29: the one rule for files read on a request path (regular, inside the root, capped). */
describe('safe reads of files from the runs root', () => {
  let dir: string;
  let root: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(tmpdir(), 'safe-read-'));
    root = path.join(dir, 'runs');
    fs.mkdirSync(root);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses a FIFO without blocking, and a symlink to /dev/zero, with one line', () => {
    const fifo = path.join(root, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => readRegularFileCapped(fifo, { root })).toThrow(/^[^\n]*fifo: not a regular file$/);
    expect(() => readRecordText(fifo)).toThrow(/not a regular file/);
    const zero = path.join(root, 'zero');
    fs.symlinkSync('/dev/zero', zero);
    expect(() => readRegularFileCapped(zero, { root })).toThrow(/resolves outside the runs root/);
    expect(() => readRecordText(zero)).toThrow(/not a regular file/);
  });

  it('refuses a path whose real path leaves the root, through a file or a folder symlink', () => {
    fs.writeFileSync(path.join(dir, 'secret'), 'x');
    fs.symlinkSync(path.join(dir, 'secret'), path.join(root, 'link'));
    fs.symlinkSync(dir, path.join(root, 'folder'));
    expect(() => readRegularFileCapped(path.join(root, 'link'), { root })).toThrow(/outside the runs root/);
    expect(() => readRegularFileCapped(path.join(root, 'folder', 'secret'), { root })).toThrow(/outside the runs root/);
    expect(() => checkRealPathInside(root, path.join(root, 'folder', 'secret'), 'run file path')).toThrow(/^run file path: resolves outside the runs root$/);
    expect(readRegularFileCapped(path.join(root, 'missing'), { root })).toBeUndefined();
  });

  it('noFollow: the file itself must not be a symlink (even one inside the root); its folders are resolved', () => {
    fs.writeFileSync(path.join(root, 'real'), 'text');
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'link'));
    expect(readRegularFileCapped(path.join(root, 'link'), { root })?.text).toBe('text');
    expect(() => readRegularFileCapped(path.join(root, 'link'), { root, noFollow: true })).toThrow(/^[^\n]*link: is a symbolic link \(refused\)$/);
    fs.symlinkSync(root, path.join(dir, 'root-link'));
    expect(readRegularFileCapped(path.join(dir, 'root-link', 'real'), { root, noFollow: true })?.text).toBe('text');
    expect(openRegularFile(path.join(root, 'missing'), { noFollow: true })).toBeUndefined();
    expect(openRegularFile(path.join(root, 'no-folder', 'x'), { noFollow: true })).toBeUndefined();
    const fifo = path.join(root, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => openRegularFile(fifo, { noFollow: true })).toThrow(/fifo: not a regular file$/);
  });

  it('reads at most the cap: the last bytes from a line start', () => {
    const file = path.join(root, 'big');
    fs.writeFileSync(file, 'aaaa\nbbbb\ncccc\n');
    expect(readRegularFileCapped(file, { root, maxBytes: 7 })).toEqual(expect.objectContaining({ text: 'cccc\n', truncated: true }));
    expect(readRegularFileCapped(file, { root })).toEqual(expect.objectContaining({ text: 'aaaa\nbbbb\ncccc\n', truncated: false }));
    expect(() => readRecordText(file, 4)).toThrow(/over the 4-byte limit/);
  });

  it('a FileTail with a root never reads a file whose real path is outside it (the SSE tails)', () => {
    const feed = { watch: () => () => undefined } as unknown as ChangeFeed;
    fs.writeFileSync(path.join(dir, 'secret'), 'secret\n');
    const link = path.join(root, 'agent-stdout.txt');
    fs.symlinkSync(path.join(dir, 'secret'), link);
    const tail = new FileTail(link, feed, 1000, false, root);
    const chunks: string[] = [];
    tail.on((c) => chunks.push(c));
    tail.poll();
    tail.close();
    expect(chunks).toEqual([]);
    expect(tail.readHead()).toBe('');
  });
});
