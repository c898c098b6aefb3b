import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readRunInfo, RunInfo, StorageError, tryFlock, unflock, updateRunInfo, withFileLock, writeRunInfo, ZERO_TIME } from '@app/storage';
import { childNodePath, compileStorage } from './helpers/compile-storage';
import { makeTempDir } from './helpers/temp';
import { waitFor } from '../../utils/wait';

function baseInfo(): RunInfo {
  return {
    version: 1,
    run_id: 'r1',
    project_id: 'p',
    task_id: 't',
    agent: 'claude',
    pid: 1,
    pgid: 1,
    start_time: new Date('2026-01-01T00:00:00Z'),
    end_time: ZERO_TIME,
    exit_code: 0,
    status: 'running',
    error_summary: 'x',
    agent_version: '',
  };
}

function runNode(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['-e', script, ...args], {
    env: { ...process.env, NODE_PATH: childNodePath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string; stdout: string }> {
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (d) => (stderr += d));
  child.stdout?.on('data', (d) => (stdout += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr, stdout })));
}

/** Resolves once the child printed `line` on stdout. */
function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d) => {
      buf += d;
      if (buf.includes(line)) resolve();
    });
    child.on('close', () => reject(new Error(`child exited before printing ${line}`)));
  });
}

/** How many descriptors of this process are open on `file` (from /proc/self/fd). */
function openFdsOn(file: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describe('run-info updates across real processes', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let lib: string;
  beforeAll(() => {
    tmp = makeTempDir('storage-conc-');
    lib = compileStorage(join(tmp.dir, 'lib'));
  });
  afterAll(() => tmp.cleanup());

  it('serialises concurrent updaters (no lost update) while readers never see a partial file', async () => {
    const dir = join(tmp.dir, 'conc');
    mkdirSync(dir);
    const path = join(dir, 'run-info.yaml');
    // A long field makes each write span more than one page, so a torn write would show.
    writeRunInfo(path, { ...baseInfo(), commandline: 'x'.repeat(20000) });
    const workers = 4;
    const perWorker = 25;
    const script = `
      const s = require(process.argv[1]);
      (async () => {
        for (let i = 0; i < Number(process.argv[3]); i++) {
          await s.updateRunInfo(process.argv[2], (info) => { info.exit_code += 1; info.error_summary = 'w' + process.pid + '-' + i; });
        }
      })().catch((e) => { console.error(e.message); process.exit(3); });
    `;
    const children = Array.from({ length: workers }, () => exited(runNode(script, [lib, path, String(perWorker)])));
    let done = false;
    let reads = 0;
    const reader = (async () => {
      while (!done) {
        const info = readRunInfo(path); // throws on a partial or missing file
        expect(info.commandline).toHaveLength(20000);
        expect(info.agent_version).toBe('');
        reads++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const results = await Promise.all(children);
    done = true;
    await reader;
    for (const r of results) expect(r).toEqual(expect.objectContaining({ code: 0, stderr: '' }));
    expect(readRunInfo(path).exit_code).toBe(workers * perWorker);
    expect(reads).toBeGreaterThan(0);
    expect(readdirSync(dir)).toEqual(['run-info.yaml']); // lock and temp files cleaned up
  });

  it('times out with LOCK_TIMEOUT while another process (flock(1)) holds the lock, and then succeeds', async () => {
    const dir = join(tmp.dir, 'timeout');
    mkdirSync(dir);
    const path = join(dir, 'run-info.yaml');
    writeRunInfo(path, baseInfo());
    // util-linux flock(1) uses flock(2), the same call Go's syscall.Flock makes.
    const holder = spawn('flock', ['-x', `${path}.lock`, 'sh', '-c', 'echo locked; read _'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await waitForLine(holder, 'locked');
    const err = await updateRunInfo(path, (i) => ({ ...i, status: 'failed' }), { timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('LOCK_TIMEOUT');
    expect((err as StorageError).message).toBe('acquire run-info lock: lock timeout');
    expect(readRunInfo(path).status).toBe('running');
    holder.stdin?.end('\n');
    await exited(holder);
    const updated = await updateRunInfo(path, (i) => ({ ...i, status: 'failed' }), { timeoutMs: 30_000 });
    expect(updated.status).toBe('failed');
    expect(readRunInfo(path).status).toBe('failed');
  });

  it('waits for a lock held by another process instead of failing', async () => {
    const dir = join(tmp.dir, 'wait');
    mkdirSync(dir);
    const lockPath = join(dir, 'x.lock');
    const holder = spawn('flock', ['-x', lockPath, 'sh', '-c', 'echo locked; read _'], { stdio: ['pipe', 'pipe', 'inherit'] });
    await waitForLine(holder, 'locked');
    let entered = false;
    const pending = withFileLock(lockPath, { timeoutMs: 60_000, pollMs: 5 }, () => {
      entered = true;
      return 42;
    });
    // The waiter has opened the lock file (and so tried flock) while the other process holds it.
    await waitFor('the waiter to open the lock file', () => openFdsOn(lockPath) >= 1);
    expect(entered).toBe(false);
    holder.stdin?.end('\n');
    await expect(pending).resolves.toBe(42);
    expect(existsSync(lockPath)).toBe(true); // kept unless removeAfter
  });

  it('re-locks when the holder deleted the lock file (upstream removes run-info.yaml.lock after updating)', async () => {
    const dir = join(tmp.dir, 'relock');
    mkdirSync(dir);
    const lockPath = join(dir, 'run-info.yaml.lock');
    const fd = openSync(lockPath, 'a+');
    expect(tryFlock(fd, 'ex')).toBe(true);
    let sawLockFile: boolean | undefined;
    const pending = withFileLock(lockPath, { timeoutMs: 60_000, pollMs: 5 }, () => {
      sawLockFile = existsSync(lockPath);
    });
    // Wait until the waiter holds its own fd on the old inode (ours + its own), then pull the file away.
    await waitFor('the waiter to open the lock file', () => openFdsOn(lockPath) >= 2);
    // The holder deletes the file, then unlocks: the waiter's lock on the old inode is worthless.
    rmSync(lockPath);
    unflock(fd);
    closeSync(fd);
    await pending;
    expect(sawLockFile).toBe(true);
  });

  it('does not update a missing run-info', async () => {
    const path = join(tmp.dir, 'missing', 'run-info.yaml');
    mkdirSync(join(tmp.dir, 'missing'));
    await expect(updateRunInfo(path, () => undefined)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
