import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { P, running, Sandbox, T1, T2, T3, writeRun } from './inspect-helpers';

// #30 defect 13: `list --tree` / `status --tree` show the runs of each task with sub-agent runs
// (parent_run_id) beneath the run that started them, across tasks; --json nests them.
interface Node {
  run_id: string;
  task_id: string;
  status: string;
  parent_run_id?: string;
  children: Node[];
}

const ROOT1 = '20260101-1200000000-100-1'; // T1, first attempt (failed)
const ROOT2 = '20260101-1300000000-100-1'; // T1, second attempt (running), parent of CHILD_A and CHILD_B
const CHILD_A = '20260101-1301000000-101-1'; // T1, sub-agent of ROOT2
const GRANDCHILD = '20260101-1302000000-102-1'; // T1, sub-agent of CHILD_A
const CHILD_B = '20260101-1303000000-201-1'; // T2, sub-agent of ROOT2 in another task
const LOOP_X = '20260101-1400000000-300-1'; // T3, parent link cycle X <-> Y (corrupt data)
const LOOP_Y = '20260101-1401000000-300-2';
const ORPHAN = '20260101-1402000000-300-3'; // T3, parent not in the project

/** The first cell of a text line, indentation kept. */
const cell0 = (l: string): string => l.replace(/(\S)\s{2,}\S.*$/, '$1').trimEnd();

const shape = (nodes: Node[]): unknown[] => nodes.map((n) => ({ [`${n.task_id}/${n.run_id}`]: shape(n.children) }));

describe('run-agent list --tree / status --tree', () => {
  let sb: Sandbox;

  beforeEach(() => {
    sb = new Sandbox();
    writeRun(sb.root, P, T1, ROOT1, { status: 'failed', exit_code: 1 });
    writeRun(sb.root, P, T1, ROOT2, running(sb.livePid()));
    writeRun(sb.root, P, T1, CHILD_A, { parent_run_id: ROOT2 });
    writeRun(sb.root, P, T1, GRANDCHILD, { parent_run_id: CHILD_A, agent: 'codex' });
    writeRun(sb.root, P, T2, CHILD_B, { parent_run_id: ROOT2, status: 'failed', exit_code: 3 });
    writeRun(sb.root, P, T3, LOOP_X, { parent_run_id: LOOP_Y });
    writeRun(sb.root, P, T3, LOOP_Y, { parent_run_id: LOOP_X });
    writeRun(sb.root, P, T3, ORPHAN, { parent_run_id: '20250101-0000000000-1-1' });
  });

  afterEach(() => sb.cleanup());

  it('list --project --tree --json nests every run once under the run that started it', async () => {
    const r = await sb.run(['list', '--root', sb.root, '--project', P, '--tree', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const tasks = (JSON.parse(r.stdout) as { tasks: { task_id: string; latest_status: string; runs: number; tree: Node[] }[] }).tasks;
    const byTask = Object.fromEntries(tasks.map((t) => [t.task_id, t]));
    expect(byTask[T1].runs).toBe(4);
    expect(shape(byTask[T1].tree)).toEqual([
      { [`${T1}/${ROOT1}`]: [] },
      { [`${T1}/${ROOT2}`]: [{ [`${T1}/${CHILD_A}`]: [{ [`${T1}/${GRANDCHILD}`]: [] }] }, { [`${T2}/${CHILD_B}`]: [] }] },
    ]);
    expect(byTask[T1].tree[1].status).toBe('running');
    expect(byTask[T1].tree[1].children[1]).toMatchObject({ status: 'failed', parent_run_id: ROOT2 });
    expect(byTask[T2].tree).toEqual([]); // its run hangs under T1's run, not twice
    // a cycle or a parent outside the project: each run is a root of its own task, none is lost
    expect(shape(byTask[T3].tree)).toEqual([{ [`${T3}/${LOOP_X}`]: [] }, { [`${T3}/${LOOP_Y}`]: [] }, { [`${T3}/${ORPHAN}`]: [] }]);
    expect(byTask[T3].tree[2].parent_run_id).toBe('20250101-0000000000-1-1');
  });

  it('list --tree prints tasks with their runs indented, a run of another task named in brackets', async () => {
    const r = await sb.run(['list', '--root', sb.root, '--project', P, '--tree']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s{2,}/)).toEqual(['TASK / RUN', 'STATUS', 'EXIT_CODE', 'AGENT', 'STARTED', 'DURATION']);
    expect(lines.slice(1, 7).map((l) => cell0(l))).toEqual([
      T1,
      `  ${ROOT1}`,
      `  ${ROOT2}`,
      `    ${CHILD_A}`,
      `      ${GRANDCHILD}`,
      `    ${CHILD_B} [${T2}]`,
    ]);
    expect(lines[3]).toMatch(/ running +- +claude /);
    expect(lines[6]).toMatch(/ failed +3 +claude /);
    expect(lines[7]).toMatch(new RegExp(`^${T2} +failed$`));
    expect(cell0(lines[8])).toBe(T3);

    const one = await sb.run(['list', '--root', sb.root, '--project', P, '--task', T1, '--tree', '--json']);
    expect(one.code).toBe(0);
    const all = await sb.run(['list', '--root', sb.root, '--project', P, '--tree', '--json']);
    const t1Tree = (JSON.parse(all.stdout) as { tasks: { task_id: string; tree: Node[] }[] }).tasks.find((t) => t.task_id === T1)!.tree;
    expect((JSON.parse(one.stdout) as { runs: Node[] }).runs).toEqual(t1Tree);
  });

  it('status --tree shows each task with the tree of its latest run', async () => {
    const json = await sb.run(['status', '--root', sb.root, '--project', P, '--tree', '--json']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const tasks = (JSON.parse(json.stdout) as { tasks: { task_id: string; status: string; tree: Node[] }[] }).tasks;
    const t1 = tasks.find((t) => t.task_id === T1)!;
    expect(t1).toMatchObject({ status: 'completed', latest_run: GRANDCHILD }); // the row is status's own: the task's newest run
    expect(shape(t1.tree)).toEqual([{ [`${T1}/${ROOT2}`]: [{ [`${T1}/${CHILD_A}`]: [{ [`${T1}/${GRANDCHILD}`]: [] }] }, { [`${T2}/${CHILD_B}`]: [] }] }]);

    const text = await sb.run(['status', '--root', sb.root, '--project', P, '--task', T1, '--tree']);
    expect(text.code).toBe(0);
    expect(text.stdout.trimEnd().split('\n').map((l) => cell0(l))).toEqual([
      'TASK / RUN',
      T1,
      `  ${ROOT2}`,
      `    ${CHILD_A}`,
      `      ${GRANDCHILD}`,
      `    ${CHILD_B} [${T2}]`,
    ]);
  });

  it('a sub-agent job started with --parent-run-id appears beneath its parent', async () => {
    const job = await sb.run(['job', '--root', sb.root, '--project', P, '--task', T3, '--agent', 'claude', '--prompt', 'hi', '--parent-run-id', ROOT1]);
    expect(job.code).toBe(0);
    const child = readdirSync(join(sb.root, P, T3, 'runs')).find((d) => ![LOOP_X, LOOP_Y, ORPHAN].includes(d))!;
    const r = await sb.run(['list', '--root', sb.root, '--project', P, '--task', T1, '--tree', '--json']);
    const runs = (JSON.parse(r.stdout) as { runs: Node[] }).runs;
    expect(runs[0].run_id).toBe(ROOT1);
    expect(runs[0].children).toMatchObject([{ run_id: child, task_id: T3, status: 'completed', parent_run_id: ROOT1, children: [] }]);
  });

  it('refuses --tree where it has no meaning, exit 2 with one line', async () => {
    for (const args of [
      ['list', '--tree'],
      ['list', '--project', P, '--tree', '--activity'],
      ['status', '--project', P, '--tree', '--concise'],
      ['status', '--project', P, '--tree', '--usage'],
    ]) {
      const r = await sb.run([...args, '--root', sb.root]);
      expect({ args, code: r.code, lines: r.stderr.trimEnd().split('\n').length }).toEqual({ args, code: 2, lines: 1 });
      expect(r.stderr).toMatch(/--tree/);
      expect(r.stdout).toBe('');
    }
  });
});
