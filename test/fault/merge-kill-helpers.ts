import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { mergeQueuePath, prepareTaskWorktree, readMergeQueue, readWorktreeRecord, type MergeQueueEntry } from '@app/worktree';
import { gitSync } from '../utils/git-repo';
import { loopParts } from '../utils/loop-parts';
import { processAlive } from '../utils/processes';
import { P, WorktreeSandbox } from '../e2e/worktree/helpers';

/**
 * A merge-kill case (test/fault/merge-kills.spec.ts): a real repository with worktree tasks that
 * each made a commit, and a verify command that logs its start and end, leaves a straggler in its
 * process group and fails when the merge result holds BROKEN.
 */
export const VERIFY = `#!/bin/sh
echo "start $JRUN_TASK_ID $$" >> "$VERIFY_LOG"
sleep 300 >/dev/null 2>&1 &
sleep 0.2
if [ -f BROKEN ]; then echo "BROKEN is in the merge result"; exit 3; fi
echo "end $JRUN_TASK_ID $$" >> "$VERIFY_LOG"
`;

/** The environment variable that marks every process of one merge driver (its verify commands and git children inherit it). */
export const MARK = 'FAULT_MERGE_MARK';

export interface CaseTask {
  id: string;
  /** Its commit adds BROKEN: the verify fails and the merge must end `failed`. */
  broken: boolean;
}

export class MergeCase extends WorktreeSandbox {
  readonly verify = join(this.dir, 'verify.sh');
  readonly verifyLog = join(this.dir, 'verify.log');
  readonly tasks: CaseTask[] = [];

  constructor() {
    super();
    writeFileSync(this.verify, VERIFY);
    chmodSync(this.verify, 0o755);
    this.writeConfig(`worktree:\n  verify: ${this.verify}\n`);
  }

  /** A worktree task (registered in the runs root, as a task start makes it) with a commit of its own; `leftover`: plus an uncommitted file. */
  async addTask(id: string, broken: boolean, leftover: boolean): Promise<void> {
    const w = await prepareTaskWorktree({ root: this.root, projectId: P, taskId: id, taskDir: this.taskDir(id), isolation: { worktree: true, repo: this.repo }, writers: loopParts.writers });
    const wt = w!.cwd;
    writeFileSync(join(wt, `${id}.txt`), `${id}\n`);
    if (broken) writeFileSync(join(wt, 'BROKEN'), `${id}\n`);
    gitSync(wt, 'add', '-A');
    gitSync(wt, 'commit', '-q', '-m', `work of ${id}`);
    if (leftover) writeFileSync(join(wt, `${id}.leftover`), 'not committed by the agent\n');
    this.tasks.push({ id, broken });
  }

  /** Queues task `id`'s merge as an earlier `run-agent merge` would have (the queue file, written whole). */
  queue(id: string): void {
    const rec = readWorktreeRecord(this.taskDir(id))!;
    const entries = existsSync(mergeQueuePath(this.repo)) ? readMergeQueue(this.repo) : [];
    const seq = entries.reduce((m, e) => Math.max(m, e.seq), 0) + 1;
    const entry: MergeQueueEntry = { seq, project_id: P, task_id: id, task_dir: resolve(this.taskDir(id)), branch: rec.branch, base_branch: rec.base_branch, verify: this.verify, state: 'queued', queued_at: new Date().toISOString(), attempts: 0 };
    mkdirSync(join(this.repo, '.conductor'), { recursive: true });
    writeFileSync(mergeQueuePath(this.repo), stringify({ next_seq: seq + 1, entries: [...entries, entry] }));
  }

  queueNow(): MergeQueueEntry[] {
    return existsSync(mergeQueuePath(this.repo)) ? readMergeQueue(this.repo) : [];
  }

  /** Lines of the verify log: [start|end, task, pid]. */
  verifyLines(): string[][] {
    return existsSync(this.verifyLog) ? readFileSync(this.verifyLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ')) : [];
  }
}

/** Live processes whose environment holds `MARK=<mark>` (pid and command line). */
export function markedProcesses(mark: string): string[] {
  const needle = `\0${MARK}=${mark}\0`;
  const out: string[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!`\0${readFileSync(`/proc/${d}/environ`, 'latin1')}`.includes(needle) || !processAlive(Number(d))) continue;
      out.push(`${d} ${readFileSync(`/proc/${d}/cmdline`, 'latin1').replace(/\0/g, ' ').trim()}`);
    } catch {
      // gone while we looked, or not ours
    }
  }
  return out;
}

export type Check = (what: string, ok: boolean, detail?: () => string) => void;

/** Merge commits of `main` by second parent (the merged branch tip). */
function mergesByTip(repo: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of gitSync(repo, 'rev-list', '--merges', '--parents', 'main').split('\n').filter(Boolean)) {
    const [commit, , tip] = line.split(' ');
    out.set(tip, [...(out.get(tip) ?? []), commit]);
  }
  return out;
}

/**
 * The end state after the resumption: the repository is consistent, no half-merge, each task's
 * branch merged at most once (good tasks exactly once, in queue order), every queued merge ended
 * merged or failed with the reason in the queue, WORKTREE.yaml and the task bus; no scratch worktree left.
 */
export function checkEndState(c: MergeCase, check: Check): void {
  const git = (...args: string[]) => gitSync(c.repo, ...args);
  let fsck = '';
  try {
    execFileSync('git', ['fsck', '--no-progress', '--no-dangling'], { cwd: c.repo, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    fsck = String((err as { stderr?: Buffer }).stderr ?? err);
  }
  check('git fsck passes', fsck === '', () => fsck);
  const gitDir = join(c.repo, '.git');
  check('no half-merge in the main repository (MERGE_HEAD, index.lock)', !existsSync(join(gitDir, 'MERGE_HEAD')) && !existsSync(join(gitDir, 'index.lock')));
  check('the main checkout is on main', git('symbolic-ref', 'HEAD') === 'refs/heads/main');
  const status = git('status', '--porcelain');
  check('the main checkout is clean (index and working tree as main)', status === '', () => status);
  const worktrees = git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length;
  check('no scratch worktree is left', worktrees === 1 + c.tasks.length && !(existsSync(join(c.repo, '.conductor', 'merge')) && readdirSync(join(c.repo, '.conductor', 'merge')).length), () => git('worktree', 'list'));

  const queue = c.queueNow();
  const merges = mergesByTip(c.repo);
  const order: Array<[number, number]> = [];
  for (const t of c.tasks) {
    const rec = readWorktreeRecord(c.taskDir(t.id))!;
    const tip = git('rev-parse', `refs/heads/${rec.branch}`);
    const mine = queue.filter((e) => e.task_id === t.id);
    const last = mine[mine.length - 1];
    check(`${t.id}: queued and finished`, !!last && (last.state === 'merged' || last.state === 'failed'), () => JSON.stringify(mine));
    const bus = c.bus(t.id);
    const commits = merges.get(tip) ?? [];
    check(`${t.id}: its branch is merged at most once`, commits.length <= 1, () => commits.join(','));
    if (t.broken) {
      check(`${t.id}: a red verify is never merged`, commits.length === 0 && !isAncestor(c.repo, tip), () => commits.join(','));
      check(`${t.id}: failed with the verify's reason in the queue`, last.state === 'failed' && last.outcome === 'failed' && /verify command .* failed/.test(last.detail ?? ''), () => JSON.stringify(last));
      check(`${t.id}: WORKTREE.yaml says failed with the reason`, rec.merge_status === 'failed' && /verify command/.test(rec.merge_detail ?? ''), () => JSON.stringify(rec));
      check(`${t.id}: MERGE_FAILED on the task bus`, bus.some((m) => m.type === 'MERGE_FAILED' && /verify command/.test(m.body)), () => bus.map((m) => m.type).join(','));
      continue;
    }
    check(`${t.id}: merged exactly once`, commits.length === 1, () => `tip ${tip}, merges ${JSON.stringify([...merges])}`);
    const commit = commits[0];
    check(`${t.id}: merged in the queue with its merge commit`, last.state === 'merged' && last.outcome === 'merged' && last.commit === commit, () => `${commit}: ${JSON.stringify(last)}`);
    check(`${t.id}: WORKTREE.yaml names its merge commit`, rec.merge_status === 'merged' && rec.merged_commit === commit, () => JSON.stringify(rec));
    check(`${t.id}: the task bus names its merge commit`, bus.some((m) => m.type === 'INFO' && m.body.includes(commit)), () => bus.map((m) => `${m.type} ${m.body}`).join(' | '));
    order.push([last.seq, Number(git('rev-list', '--count', commit))]);
  }
  const sorted = [...order].sort((a, b) => a[0] - b[0]);
  check('merges landed in queue order', sorted.every((o, i) => i === 0 || o[1] > sorted[i - 1][1]), () => JSON.stringify(sorted));
}

function isAncestor(repo: string, commit: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, 'main'], { cwd: repo, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
