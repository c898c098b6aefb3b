import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDependsOn, readRunInfo } from '@app/storage';
import { PROJECT, Sandbox } from './helpers';

describe('run-agent goal / review / facts (built CLI)', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  describe('goal decompose', () => {
    it('prints byte-identical YAML and JSON for the same input and writes --out', async () => {
      const goalFile = join(sb.dir, 'goal.md');
      writeFileSync(goalFile, 'Ship the login page\r\nwith tests\r\n');
      const args = ['goal', 'decompose', '--project', PROJECT, '--goal-file', goalFile];
      const [y1, y2, j1, j2] = await Promise.all([sb.run(args), sb.run(args), sb.run([...args, '--json']), sb.run([...args, '--json', '--out', join(sb.dir, 'out', 'spec.json')])]);
      expect([y1.code, y2.code, j1.code, j2.code]).toEqual([0, 0, 0, 0]);
      expect(y1.stdout).toBe(y2.stdout);
      expect(j1.stdout).toBe(j2.stdout);
      expect(y1.stdout).toMatch(/^schema_version: goal-workflow\/v1\n/);
      expect(readFileSync(join(sb.dir, 'out', 'spec.json'), 'utf8')).toBe(j1.stdout);
      expect(JSON.parse(j1.stdout).goal).toMatchObject({ mode: 'file', preview: 'Ship the login page' });
    });

    it('reports usage errors with exit 2 and one line', async () => {
      const both = await sb.run(['goal', 'decompose', '--project', PROJECT, '--goal', 'x', '--goal-file', 'y']);
      expect(both).toMatchObject({ code: 2, stderr: 'Error: --goal and --goal-file are mutually exclusive\n' });
      const none = await sb.run(['goal', 'decompose', '--project', PROJECT]);
      expect(none).toMatchObject({ code: 2, stderr: 'Error: one of --goal or --goal-file is required\n' });
      const noProject = await sb.run(['goal', 'decompose', '--goal', 'x', '--root', sb.root]);
      expect(noProject.code).toBe(2);
      expect(noProject.stderr).toMatch(/^Error: cannot infer project/);
      const tooMany = await sb.run(['goal', 'decompose', '--project', PROJECT, '--goal', 'x', '--max-parallel', '17']);
      expect(tooMany.code).toBe(2);
      const help = await sb.run(['goal', 'decompose', '--help']);
      for (const flag of ['--goal ', '--goal-file', '--project', '--root', '--strategy', '--template', '--max-parallel', '--json', '--out', '--run']) expect(help.stdout).toContain(flag);
    });

    it('goal run --spec creates a task graph that run-agent task executes in dependency order', async () => {
      const specPath = join(sb.dir, 'spec.yaml');
      const made = await sb.run(['goal', 'decompose', '--project', PROJECT, '--goal', 'Make it work', '--out', specPath]);
      expect(made.code).toBe(0);
      const created = await sb.run(['goal', 'run', '--spec', specPath, '--root', sb.root, '--goal', 'Make it work', '--json']);
      expect(created.code).toBe(0);
      const tasks = (JSON.parse(created.stdout) as { tasks: { task_id: string; depends_on: string[] }[] }).tasks;
      expect(tasks).toHaveLength(8);
      const [first, second] = tasks;
      expect(readDependsOn(join(sb.root, PROJECT, second.task_id))).toEqual([first.task_id]);
      expect(readFileSync(join(sb.root, PROJECT, first.task_id, 'TASK.md'), 'utf8')).toContain('Make it work');

      // The dependent task starts first and waits; the first one completes and releases it.
      const env = { FAKE_AGENT_DONE: '1' };
      const common = ['--root', sb.root, '--project', PROJECT, '--agent', 'codex', '--dependency-poll-interval', '100ms', '--restart-delay', '10ms'];
      const waiting = sb.run(['task', ...common, '--task', second.task_id], { env });
      const ran = await sb.run(['task', ...common, '--task', first.task_id], { env });
      expect(ran.code).toBe(0);
      expect((await waiting).code).toBe(0);
      for (const t of [first, second]) expect(existsSync(join(sb.root, PROJECT, t.task_id, 'DONE'))).toBe(true);
      const firstRun = readFileSync(join(sb.root, PROJECT, first.task_id, 'runs', readdirSync(join(sb.root, PROJECT, first.task_id, 'runs'))[0], 'prompt.md'), 'utf8');
      expect(firstRun).toContain('Assess context and constraints');

      const mismatch = await sb.run(['goal', 'run', '--spec', specPath, '--root', sb.root, '--goal', 'Other goal']);
      expect(mismatch).toMatchObject({ code: 2, stderr: 'Error: the goal text does not match the spec (digest_sha256 differs)\n' });
    });
  });

  describe('goal run --start', () => {
    it('runs the whole graph in dependency order (exit 0), and blocks dependents of a failed task (exit 1)', async () => {
      const specPath = join(sb.dir, 'spec.json');
      expect((await sb.run(['goal', 'decompose', '--project', PROJECT, '--goal', 'Run it all', '--out', specPath, '--max-parallel', '2'])).code).toBe(0);
      const res = await sb.run(['goal', 'run', '--spec', specPath, '--root', sb.root, '--start', '--json', '--restart-delay', '10ms'], { env: { FAKE_AGENT_DONE: '1' } });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const out = JSON.parse(res.stdout) as { ok: boolean; tasks: { task_id: string; outcome: string }[] };
      expect(out.ok).toBe(true);
      expect(out.tasks.map((t) => t.outcome)).toEqual(Array(8).fill('done'));
      const spec = JSON.parse(readFileSync(specPath, 'utf8')) as { tasks: { task_id: string; agent: string; depends_on?: string[] }[] };
      const firstRun = (taskId: string) => {
        const dir = join(sb.root, PROJECT, taskId, 'runs');
        return readRunInfo(join(dir, readdirSync(dir).sort()[0], 'run-info.yaml'));
      };
      for (const t of spec.tasks) {
        const info = firstRun(t.task_id);
        expect(info.agent).toBe(t.agent);
        for (const dep of t.depends_on ?? []) expect(info.start_time.getTime()).toBeGreaterThanOrEqual(firstRun(dep).end_time.getTime());
      }

      const other = join(sb.dir, 'other.json');
      expect((await sb.run(['goal', 'decompose', '--project', PROJECT, '--goal', 'Fail early', '--out', other])).code).toBe(0);
      const failed = await sb.run(['goal', 'run', '--spec', other, '--root', sb.root, '--start', '--max-restarts', '0'], { env: { FAKE_AGENT_EXIT: '1' } });
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(/\[failed {2}\] task-\d{8}-\d{6}-01-assess-context/);
      expect(failed.stdout).toMatch(/\[blocked \] task-\d{8}-\d{6}-02-decompose-plan: dependency task-\d{8}-\d{6}-01-assess-context failed/);
      expect(failed.stderr).toMatch(/^Error: workflow workflow-proj-[0-9a-f]{12}: not every task finished/);
    });
  });

  describe('review quorum', () => {
    const task = 'task-20260101-000000-review';
    let bus: string;
    beforeEach(() => {
      mkdirSync(join(sb.root, PROJECT, task), { recursive: true });
      bus = join(sb.root, PROJECT, task, 'TASK-MESSAGE-BUS.md');
    });

    it('is met with two approving runs (exit 0) and not met when one approval lacks a run id (exit 1)', async () => {
      await sb.post(bus, { type: 'REVIEW', run_id: 'run-a', body: 'LGTM' });
      await sb.post(bus, { type: 'DECISION', run_id: '', body: 'APPROVED (no run id)' });
      const args = ['review', 'quorum', '--root', sb.root, '--project', PROJECT, '--task', task, '--runs', 'run-a,run-b'];
      const notMet = await sb.run(args);
      expect(notMet.code).toBe(1);
      expect(notMet.stdout).toContain('  approvals: 1 (required: 2)\n');
      expect(notMet.stdout.trimEnd().split('\n').at(-1)).toBe('result: QUORUM NOT MET — insufficient approvals (1/2)');

      await sb.post(bus, { type: 'REVIEW', run_id: 'run-b', body: '+1 looks good' });
      const met = await sb.run(args);
      expect(met.code).toBe(0);
      expect(met.stdout.trimEnd().split('\n').at(-1)).toBe('result: QUORUM MET');
      const json = await sb.run([...args, '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({ met: true, approvals: 2, ignored_without_run_id: 1 });
    });

    it('vetoes on rejection and validates its flags', async () => {
      await sb.post(join(sb.root, PROJECT, 'PROJECT-MESSAGE-BUS.md'), { type: 'REVIEW', run_id: 'run-a', body: 'REJECTED: no tests' });
      const veto = await sb.run(['review', 'quorum', '--root', sb.root, '--project', PROJECT, '--runs', 'run-a', '--required', '1']);
      expect(veto.code).toBe(1);
      expect(veto.stdout).toContain('result: QUORUM NOT MET — rejection veto (1 rejection(s))');
      expect(await sb.run(['review', 'quorum', '--root', sb.root, '--project', PROJECT])).toMatchObject({ code: 2, stderr: 'Error: --runs is required\n' });
      expect((await sb.run(['review', 'quorum', '--root', sb.root, '--project', PROJECT, '--runs', '../x'])).code).toBe(2);
      expect((await sb.run(['review', 'quorum', '--root', sb.root, '--project', PROJECT, '--runs', 'a', '--required', 'two'])).code).toBe(2);
    });
  });

  describe('facts promote', () => {
    it('promotes without duplicates across two runs, multi-line bodies included', async () => {
      const t1 = join(sb.root, PROJECT, 'task-20260101-000000-one');
      mkdirSync(t1, { recursive: true });
      await sb.post(join(t1, 'TASK-MESSAGE-BUS.md'), { type: 'FACT', run_id: 'r1', body: 'line one\nline two' });
      await sb.post(join(t1, 'TASK-MESSAGE-BUS.md'), { type: 'FACT', run_id: 'r1', body: 'single' });
      const args = ['facts', 'promote', '--root', sb.root, '--project', PROJECT];
      const dry = await sb.run([...args, '--dry-run']);
      expect(dry).toMatchObject({ code: 0, stdout: 'dry-run: would promote 2 fact(s) (0 already present)\n' });
      const first = await sb.run(args);
      const factsPath = join(sb.root, PROJECT, 'PROJECT-FACTS.md');
      expect(first).toMatchObject({ code: 0, stdout: `promoted 2 fact(s), 0 already present\nwritten: ${factsPath}\n` });
      const text = readFileSync(factsPath, 'utf8');
      const second = await sb.run(args);
      expect(second).toMatchObject({ code: 0, stdout: 'promoted 0 fact(s), 2 already present\n' });
      expect(readFileSync(factsPath, 'utf8')).toBe(text);
      expect(await sb.run(['facts', 'promote', '--root', sb.root])).toMatchObject({ code: 2, stderr: 'Error: --project is required (or set JRUN_PROJECT_ID)\n' });
      expect((await sb.run([...args, '--since', 'yesterday'])).code).toBe(2);
    });
  });
  describe('project init', () => {
    it('links a source folder so commands run inside it infer the project', async () => {
      const src = join(sb.dir, 'src-repo');
      mkdirSync(join(src, 'lib'), { recursive: true });
      writeFileSync(join(src, 'Makefile'), 'all:\n');
      const init = await sb.run(['project', 'init', '--root', sb.root, '--project', 'linked', '--dir', src]);
      expect(init).toMatchObject({ code: 0, stdout: `project linked: ${join(sb.root, 'linked')} (project_root: ${src})\n` });
      expect(readFileSync(join(sb.root, 'linked', 'home-folders.md'), 'utf8')).toBe(`project_root: ${src}\n`);
      const spec = await sb.run(['goal', 'decompose', '--goal', 'x', '--json'], { cwd: join(src, 'lib'), env: { CONDUCTOR_ROOT: sb.root } });
      expect(spec.code).toBe(0);
      expect(JSON.parse(spec.stdout).project_id).toBe('linked');
      const task = await sb.run(['task', '--prompt', 'from the linked folder', '--agent', 'codex', '--max-restarts', '0'], {
        cwd: join(src, 'lib'),
        env: { CONDUCTOR_ROOT: sb.root, FAKE_AGENT_DONE: '1' },
      });
      expect(task.code).toBe(0);
      const created = task.stderr.match(/task: (task-\S+)/)![1];
      expect(existsSync(join(sb.root, 'linked', created, 'DONE'))).toBe(true);
      const noTty = await sb.run(['project', 'init', '--root', sb.root, '--dir', src]);
      expect(noTty).toMatchObject({ code: 2, stderr: 'Error: --project is required when no terminal is attached\n' });
      expect((await sb.run(['project', 'init', '--root', sb.root, '--project', 'Bad_Id', '--dir', src])).code).toBe(2);
    });
  });
});
