import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { ensureTaskWorktree, mergeQueuePath, readMergeQueue, readWorktreeRecord } from '@app/worktree';
import { gitSync, makeRepo } from '../utils/git-repo';
import { recordTally } from './tally';
import { ERRNOS, type ErrnoName, type FaultPoint, runWithFault } from './fiu';

/**
 * The merge queue record's write site (issue #31): `run-agent merge` under fiu-run with fsync or
 * rename failing (EIO, ENOSPC, EDQUOT) from the start. Queueing is the merge's first durable
 * write, so a failure must be one clear line, exit 1, the queue file byte-identical (no temp file
 * left), the base branch and WORKTREE.yaml untouched; the merge then succeeds without a fault.
 */
const P = 'fault';
const T = 'task-20260101-120000-merge';
const POINTS: FaultPoint[] = ['posix/io/sync/fsync', 'posix/io/dir/rename'];

describe('fault injection (fiu-run) at the merge queue record', () => {
  let dir: string;
  let repo: string;
  let root: string;
  const env = { ...process.env, HOME: '', NODE_DISABLE_COMPILE_CACHE: '1', CONDUCTOR_ROOT: undefined, RUN_AGENT_ROOT: undefined, CONDUCTOR_CONFIG: undefined };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fault-merge-'));
    env.HOME = dir;
    repo = makeRepo(join(dir, 'repo'));
    root = join(dir, 'runs');
    const w = await ensureTaskWorktree({ projectId: P, taskId: T, taskDir: new RunsLayout(root).taskDir(P, T), request: { repo } });
    writeFileSync(join(w.path, 'new.txt'), 'from the task\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a failed queue write acknowledges nothing and changes nothing; the next merge succeeds', async () => {
    const args = ['merge', '--root', root, '--project', P, '--task', T];
    const base = gitSync(repo, 'rev-parse', 'main');
    let checks = 0;
    const check = (what: string, ok: boolean, detail = '') => {
      checks++;
      if (!ok) {
        recordTally({ suite: 'merge queue (enqueue)', cases: cases.length, faults: 0, checks, violations: 1 });
        throw new Error(`invariant violated: ${what} ${detail}`);
      }
    };
    const cases = POINTS.flatMap((point) => (Object.keys(ERRNOS) as ErrnoName[]).map((errno) => ({ point, errno })));
    for (const fault of cases) {
      const before = existsSync(mergeQueuePath(repo)) ? readFileSync(mergeQueuePath(repo)) : undefined;
      const out = await runWithFault(args, fault, env);
      const what = `${fault.point} ${fault.errno}:`;
      check(`${what} exit 1`, out.code === 1, `${out.code} ${out.stderr}`);
      const lines = out.stderr.trim().split('\n').filter((l) => l.trim() !== '');
      check(`${what} one clear line naming the errno`, lines.length === 1 && (out.stderr.includes(fault.errno) || out.stderr.includes(`-${ERRNOS[fault.errno]}`)), out.stderr);
      const after = existsSync(mergeQueuePath(repo)) ? readFileSync(mergeQueuePath(repo)) : undefined;
      check(`${what} the queue file is byte-identical`, before === undefined ? after === undefined : !!after && after.equals(before));
      check(`${what} no temp file left`, !readdirSync(join(repo, '.conductor')).some((f) => f.endsWith('.tmp')));
      check(`${what} the base branch is unchanged`, gitSync(repo, 'rev-parse', 'main') === base);
      check(`${what} WORKTREE.yaml has no merge outcome`, readWorktreeRecord(new RunsLayout(root).taskDir(P, T))?.merge_status === undefined);
    }
    const ok = await runWithFault(args, undefined, env);
    expect([ok.code, ok.stderr]).toEqual([0, '']);
    expect(readMergeQueue(repo).map((e) => [e.seq, e.state, e.outcome])).toEqual([[1, 'merged', 'merged']]);
    expect(readFileSync(join(repo, 'new.txt'), 'utf8')).toBe('from the task\n');
    recordTally({ suite: 'merge queue (enqueue)', cases: cases.length, faults: cases.length, checks, violations: 0 });
    expect(checks).toBe(cases.length * 6);
  }, 120_000);
});
