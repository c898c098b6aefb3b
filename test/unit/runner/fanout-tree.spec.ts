import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { abandonTurn, admitChild, appendTreeRun, childQueueBase, countTreeRuns, pruneChildQueues, startTreeLedger, takeTurn, TREE_LEDGER_FILE, treeOf, TurnState } from '@app/runner';
import { RunsLayout, writeRunInfo, ZERO_TIME } from '@app/storage';

// The fan-out count of a tree (max_runs_per_tree) reads the tree's ledger, not every run under the
// root; the ledger is recomputed from the run files when missing or left open by a crash.
describe('fan-out tree ledger (issue #33)', () => {
  let root: string;
  let layout: RunsLayout;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'fanout-tree-'));
    layout = new RunsLayout(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const project = 'proj';
  const task = (slug: string) => `task-20260101-000000-${slug}`;

  function writeRun(taskId: string, parent: string | undefined): { runId: string; runDir: string } {
    const { runId, dir } = layout.allocateRunDir(project, taskId);
    if (!parent) startTreeLedger(dir);
    writeRunInfo(join(dir, 'run-info.yaml'), {
      version: 1, run_id: runId, parent_run_id: parent, project_id: project, task_id: taskId, agent: 'claude',
      pid: 0, pgid: 0, start_time: new Date(), end_time: ZERO_TIME, exit_code: -1, status: 'running', agent_version: '',
    });
    return { runId, runDir: dir };
  }
  const child = (parent: string, taskId: string) =>
    admitChild(root, layout.taskDir(project, taskId), parent, {}, () => writeRun(taskId, parent)).then((a) => a.created);
  const count = (parent: string, taskId: string) => countTreeRuns(root, treeOf(root, parent, [layout.taskDir(project, taskId)]));

  it('counts the top run and every descendant from the ledger, across tasks and levels', async () => {
    const top = writeRun(task('top'), undefined);
    const a = await child(top.runId, task('top'));
    const b = await child(a.runId, task('other'));
    const c = await child(b.runId, task('other'));
    expect(count(b.runId, task('other'))).toBe(4);
    const ledger = readFileSync(join(top.runDir, TREE_LEDGER_FILE), 'utf8');
    expect(ledger.split('\n').filter((l) => l && l !== '+')).toEqual([a, b, c].map((r) => relative(root, r.runDir)));
  });

  it('reads the ledger, not the runs: a run written past it is only seen when the ledger is recomputed', async () => {
    const top = writeRun(task('top'), undefined);
    await child(top.runId, task('top'));
    writeRun(task('stray'), top.runId); // a descendant the ledger does not know (written by hand)
    expect(count(top.runId, task('top'))).toBe(2);
    rmSync(join(top.runDir, TREE_LEDGER_FILE));
    expect(count(top.runId, task('top'))).toBe(3); // recomputed from parent_run_id chains
    expect(readFileSync(join(top.runDir, TREE_LEDGER_FILE), 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('a creation left open by a killed writer makes the next count recompute from the files', async () => {
    const top = writeRun(task('top'), undefined);
    await child(top.runId, task('top'));
    const ledger = join(top.runDir, TREE_LEDGER_FILE);
    // the state a SIGKILL leaves between the `+` and the run folder line: the run exists, unlisted
    appendTreeRun(ledger, root, 'open');
    writeRun(task('top'), top.runId);
    expect(count(top.runId, task('top'))).toBe(3);
    // and a `+` whose run was never created counts nothing
    appendTreeRun(ledger, root, 'open');
    expect(count(top.runId, task('top'))).toBe(3);
  });

  it('a removed run folder no longer counts', async () => {
    const top = writeRun(task('top'), undefined);
    const a = await child(top.runId, task('top'));
    await child(top.runId, task('top'));
    rmSync(a.runDir, { recursive: true });
    expect(count(top.runId, task('top'))).toBe(2);
  });

  it('gc removes a parent\'s children queue only while no child holds a place or waits; a later child re-creates it', async () => {
    const queue = childQueueBase(root, 'run-p');
    const turn = (id: string, state: TurnState) => takeTurn({ root, limit: 1, runId: id, queueBase: queue }, state);
    const held = await turn('a', {});
    const waiting: TurnState = {};
    expect(await turn('b', waiting)).toBeUndefined();
    expect(pruneChildQueues(root)).toEqual([]);
    held!.release();
    expect(pruneChildQueues(root)).toEqual([]); // b still waits
    abandonTurn(waiting);
    expect(pruneChildQueues(root, true)).toEqual(['run-p']); // dry run
    expect(existsSync(queue)).toBe(true);
    expect(pruneChildQueues(root)).toEqual(['run-p']);
    expect(existsSync(queue)).toBe(false);
    const again = await turn('c', {});
    expect(again).toBeDefined();
    again!.release();
  });
});
