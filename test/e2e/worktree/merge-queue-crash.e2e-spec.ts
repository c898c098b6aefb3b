/**
 * Issue #31 acceptance: kill the server during a merge's verify and restart it. Real processes
 * (bin/conductor, bin/run-agent), a real git repository, a verify command that blocks until a
 * gate file exists. The server is SIGKILLed while the first of three queued merges verifies: no
 * verify process may outlive it; after the restart the interrupted merge is re-verified and the
 * waiting ones follow in order; nothing merges twice. Needs `npm run build`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeQueuePath, readMergeQueue } from '@app/worktree';
import { gitSync } from '../../utils/git-repo';
import { RUN_AGENT } from '../../utils/cli';
import { processAlive } from '../../utils/processes';
import { exitOf, waitFor } from '../../utils/wait';
import { getJson, RunningServer, startConductor } from '../server/helpers';
import { P, WorktreeSandbox } from './helpers';

const TASKS = ['task-20260101-120000-first', 'task-20260101-120000-second', 'task-20260101-120000-third'];

/** The process group of `pid` (field 5 of /proc/<pid>/stat). */
function pgidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** Live processes in process group `pgid`. */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return pgidOf(pid) === pgid && processAlive(pid);
      } catch {
        return false; // gone while we looked
      }
    });
}

describe('merge queue after its owner (server or run-agent merge) is SIGKILLed during verify (issue #31)', () => {
  let sb: WorktreeSandbox;
  let server: RunningServer | undefined;
  const gate = (): string => join(sb.dir, 'PASS');
  const log = (): string[] => (existsSync(join(sb.dir, 'verify.log')) ? readFileSync(join(sb.dir, 'verify.log'), 'utf8').trim().split('\n') : []);
  const merges = () => gitSync(sb.repo, 'log', '--merges', '--format=%s', 'main').split('\n').filter(Boolean).reverse();

  /** A sandbox whose verify blocks until the gate exists and records "<task> <pid of the verify shell>"; `tasks` ran, each changing its own file. */
  async function setup(tasks: string[]): Promise<void> {
    sb = new WorktreeSandbox();
    const verify = `echo "$JRUN_TASK_ID $$" >> ${join(sb.dir, 'verify.log')}; while [ ! -f ${gate()} ]; do sleep 0.05; done`;
    sb.writeConfig(`worktree:\n  verify: '${verify}'\n`);
    for (const [i, t] of tasks.entries()) {
      const r = await sb.task(t, `text ${i}`);
      expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('DONE: task completed')]);
      // the agent's shared.txt edit is undone: each task changes its own file, no conflicts between them
      const wt = join(sb.repo, '.conductor', 'worktrees', t);
      gitSync(wt, 'checkout', '--', 'shared.txt');
      writeFileSync(join(wt, `file-${i}.txt`), `${t}\n`);
    }
  }

  afterEach(async () => {
    if (sb) writeFileSync(gate(), '');
    await server?.stop('SIGKILL');
    server = undefined;
    sb?.cleanup();
  });

  it('re-verifies the interrupted merge from a clean scratch worktree, runs the waiting ones in order, merges nothing twice', async () => {
    await setup(TASKS);

    server = await startConductor(sb.dir, sb.root, sb.config);
    const url = server.url;
    const asked = TASKS.map(() => undefined as Promise<unknown> | undefined);
    for (const [i, t] of TASKS.entries()) {
      // the clients' requests never answer: the server dies under them
      asked[i] = fetch(`${url}/api/v1/tasks/${t}/merge?project_id=${P}`, { method: 'POST' }).then((r) => r.status, (e: Error) => e.message);
      await waitFor(`${t} in the merge queue`, () => existsSync(mergeQueuePath(sb.repo)) && readMergeQueue(sb.repo).length === i + 1);
      if (i === 0) await waitFor('the first verify to run', () => log().length === 1);
    }
    expect(readMergeQueue(sb.repo).map((e) => [e.task_id, e.state])).toEqual([[TASKS[0], 'verifying'], [TASKS[1], 'queued'], [TASKS[2], 'queued']]);
    const verifyPid = Number(log()[0].split(' ')[1]);
    const pgid = pgidOf(verifyPid);
    expect(pgid).not.toBe(pgidOf(server.child.pid!)); // its own process group
    expect(groupMembers(pgid).length).toBeGreaterThan(0);

    await server.stop('SIGKILL');
    for (const a of asked) expect(typeof (await a)).toBe('string'); // a connection error, not an answer
    // no verify process outlives its owner
    await waitFor(`verify process group ${pgid} to die with the server`, () => groupMembers(pgid).length === 0);
    expect(processAlive(verifyPid)).toBe(false);
    expect(merges()).toEqual([]);
    expect(readMergeQueue(sb.repo).map((e) => e.state)).toEqual(['verifying', 'queued', 'queued']);

    writeFileSync(gate(), '');
    server = await startConductor(sb.dir, sb.root, sb.config);
    const detail = async (t: string) => (await getJson(`${server!.url}/api/v1/tasks/${t}?project_id=${P}`)).body;
    await waitFor('the last queued merge to finish after the restart', async () => (await detail(TASKS[2])).worktree?.merge_queue?.state === 'merged', 60_000);

    // the interrupted verify ran again, then the waiting ones, in the order they were queued
    expect(log().map((l) => l.split(' ')[0])).toEqual([TASKS[0], ...TASKS]);
    expect(merges()).toEqual(TASKS.map((t) => `Merge conductor/${t} (${t})`));
    const queue = readMergeQueue(sb.repo);
    expect(queue.map((e) => [e.seq, e.task_id, e.state, e.outcome, e.attempts])).toEqual([
      [1, TASKS[0], 'merged', 'merged', 2],
      [2, TASKS[1], 'merged', 'merged', 1],
      [3, TASKS[2], 'merged', 'merged', 1],
    ]);
    // the clients see the outcome through the task routes and the bus
    for (const [i, t] of TASKS.entries()) {
      const w = (await detail(t)).worktree;
      expect(w).toMatchObject({ merge_status: 'merged', merged_commit: queue[i].commit, merge_queue: { seq: i + 1, state: 'merged', outcome: 'merged' } });
    }
    expect(sb.bus(TASKS[0]).map((m) => m.body).slice(-2)).toEqual([expect.stringContaining('re-verifying the merge'), expect.stringContaining(`merged conductor/${TASKS[0]} into main`)]);
    expect(server.stdout() + server.stderr()).toContain('resuming 3 merge(s), 1 interrupted during verify');
    // the killed verify's scratch worktree is gone; only the main checkout and the task worktrees remain
    expect(gitSync(sb.repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toHaveLength(1 + TASKS.length);
    expect(existsSync(join(sb.repo, '.conductor', 'merge', TASKS[0]))).toBe(false);

    // asking again merges nothing twice
    const again = await sb.run(['merge', ...sb.scope(TASKS[1]), '--config', sb.config]);
    expect([again.code, again.stdout]).toEqual([0, `conductor/${TASKS[1]} is already merged into main\n`]);
    expect(merges()).toHaveLength(TASKS.length);
  }, 180_000);
  it('a `run-agent merge` killed during verify takes its verify along; the next merge re-verifies it first', async () => {
    const [first, second] = TASKS;
    await setup([first, second]);
    const child = spawn(process.execPath, [RUN_AGENT, 'merge', ...sb.scope(first), '--config', sb.config], { cwd: sb.dir, env: sb.env(), stdio: 'ignore' });
    const exited = exitOf(child);
    await waitFor('the first verify to run', () => log().length === 1);
    const verifyPid = Number(log()[0].split(' ')[1]);
    const pgid = pgidOf(verifyPid);
    child.kill('SIGKILL');
    await exited;
    await waitFor(`verify process group ${pgid} to die with run-agent merge`, () => groupMembers(pgid).length === 0);
    expect(readMergeQueue(sb.repo).map((e) => [e.task_id, e.state])).toEqual([[first, 'verifying']]);

    writeFileSync(gate(), '');
    const r = await sb.run(['merge', ...sb.scope(second), '--config', sb.config]);
    expect([r.code, r.stdout]).toEqual([0, expect.stringMatching(new RegExp(`^merged conductor/${second} into main \\([0-9a-f]{40}\\)\\n$`))]);
    expect(log().map((l) => l.split(' ')[0])).toEqual([first, first, second]);
    expect(merges()).toEqual([first, second].map((t) => `Merge conductor/${t} (${t})`));
    expect(readMergeQueue(sb.repo).map((e) => [e.task_id, e.state, e.attempts])).toEqual([[first, 'merged', 2], [second, 'merged', 1]]);
    const again = await sb.run(['merge', ...sb.scope(first), '--config', sb.config]);
    expect([again.code, again.stdout]).toEqual([0, `conductor/${first} is already merged into main\n`]);
  }, 120_000);
});
