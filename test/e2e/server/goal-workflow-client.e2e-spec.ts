/**
 * `conductor goal …` / `conductor workflow …` as clients of a real built server (D16): the server
 * runs in monitoring mode (tasks, TASK.md and dependencies are created, nothing is launched), so
 * depends_on/blocked_by stay put while the test reads them back through the API.
 * Needs `npx nest build api && npx nest build cli`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goalTaskPrompt, parseGoalSpec, workflowStagePrompt } from '@app/orchestration';
import { CONDUCTOR, FakeApi, getJson, runCli, RUN_AGENT, RunningServer, startServer, writeConfig, writeFakeAgent } from './helpers';

interface TaskItem {
  id: string;
  depends_on: string[] | null;
  blocked_by: string[] | null;
}

describe('conductor goal / workflow clients (e2e)', () => {
  let dir: string;
  let root: string;
  let env: NodeJS.ProcessEnv;
  let server: RunningServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'goal-workflow-client-'));
    root = join(dir, 'runs');
    const config = writeConfig(dir, writeFakeAgent(dir));
    env = { HOME: dir, CONDUCTOR_URL: '', CONDUCTOR_SERVER: '', CONDUCTOR_API_KEY: '', CONDUCTOR_ROOT: '', CONDUCTOR_CONFIG: '', CONDUCTOR_PORT: '', CONDUCTOR_HOST: '', JRUN_PROJECT_ID: '', CONDUCTOR_NO_AUTH: '1' };
    server = await startServer(CONDUCTOR, ['--host', '127.0.0.1', '--port', '0', '--root', root, '--config', config], { ...env, CONDUCTOR_DISABLE_TASK_START: 'yes' }, dir);
    env.CONDUCTOR_URL = server.url;
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const tasksOf = async (project: string): Promise<Map<string, TaskItem>> => {
    const { status, body } = await getJson<{ items: TaskItem[] }>(`${server.url}/api/projects/${project}/tasks?limit=500`);
    expect(status).toBe(200);
    return new Map(body.items.map((t) => [t.id, t]));
  };

  it('goal decompose stays local: same bytes as run-agent goal decompose, no server needed', async () => {
    const args = ['goal', 'decompose', '--project', 'gproj', '--goal', 'Ship the widget', '--root', root];
    const local = await runCli(RUN_AGENT, args, env, { cwd: dir });
    const remote = await runCli(CONDUCTOR, [...args], { ...env, CONDUCTOR_URL: 'http://127.0.0.1:1' }, { cwd: dir });

    expect(remote.stderr).toBe('');
    expect(remote.code).toBe(0);
    expect(remote.stdout).toBe(local.stdout);
    expect(remote.stdout).toContain('schema_version: goal-workflow/v1');
  });

  it('goal run creates the 8 tasks through the API with their prompts and depends_on, dependencies first', async () => {
    const specPath = join(dir, 'spec.yaml');
    const goalFile = join(dir, 'goal.md');
    writeFileSync(goalFile, 'Ship the widget\nwith tests\n');
    const dec = await runCli(CONDUCTOR, ['goal', 'decompose', '--project', 'gproj', '--goal-file', goalFile, '--out', specPath], env, { cwd: dir });
    expect(dec.code).toBe(0);
    const spec = parseGoalSpec(readFileSync(specPath, 'utf8'));
    expect(spec.tasks).toHaveLength(8);

    const r = await runCli(CONDUCTOR, ['goal', 'run', '--spec', specPath, '--project', 'gproj', '--agent', 'fake'], env, { cwd: dir });

    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(8);
    const order = lines.map((l) => /^created (\S+) \(status (started|queued)\)$/.exec(l)?.[1]);
    expect(new Set(order)).toEqual(new Set(spec.tasks.map((t) => t.task_id)));
    for (const t of spec.tasks) {
      for (const dep of t.depends_on ?? []) expect(order.indexOf(dep)).toBeLessThan(order.indexOf(t.task_id));
    }

    const listed = await tasksOf('gproj');
    for (const t of spec.tasks) {
      const item = listed.get(t.task_id);
      expect(item).toBeDefined();
      expect([...(item!.depends_on ?? [])].sort()).toEqual([...(t.depends_on ?? [])].sort());
      // nothing ran (monitoring mode), so every dependency still blocks
      expect([...(item!.blocked_by ?? [])].sort()).toEqual([...(t.depends_on ?? [])].sort());
      // TASK.md is what `run-agent goal run` writes: the goal file text (it matches the spec digest)
      expect(readFileSync(join(root, 'gproj', t.task_id, 'TASK.md'), 'utf8')).toBe(`${goalTaskPrompt(spec, t, 'Ship the widget\nwith tests\n')}\n`);
    }
    const verify = spec.tasks.find((t) => t.task_id.endsWith('verify-completeness'))!;
    expect(listed.get(verify.task_id)!.blocked_by).toEqual(verify.depends_on);
  });

  it('goal run --json reports every created task with its run id', async () => {
    const specPath = join(dir, 'spec-json.json');
    expect((await runCli(CONDUCTOR, ['goal', 'decompose', '--project', 'jproj', '--goal', 'Other goal', '--out', specPath], env, { cwd: dir })).code).toBe(0);

    const r = await runCli(CONDUCTOR, ['goal', 'run', '--spec', specPath, '--json'], env, { cwd: dir });

    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { project_id: string; tasks: { task_id: string; run_id: string; status: string; depends_on: string[] }[] };
    expect(out.project_id).toBe('jproj');
    expect(out.tasks).toHaveLength(8);
    for (const t of out.tasks) {
      expect(t.status).toBe('started');
      expect(t.run_id).toMatch(/^\d{8}-\d{10}-\d+-\d+/);
      expect(existsSync(join(root, 'jproj', t.task_id, 'runs', t.run_id))).toBe(true);
    }
    // the spec agents (claude, codex, gemini) are sent when --agent is absent
    expect((await tasksOf('jproj')).size).toBe(8);
  });

  it('workflow run --dry-run prints the chained plan and creates nothing', async () => {
    const base = 'task-20260101-000000-wfdry';
    const r = await runCli(CONDUCTOR, ['workflow', 'run', '--project', 'wproj', '--task', base, '--from-stage', '3', '--to-stage', '5', '--dry-run'], env);

    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `plan stage 3 Decomposition: ${base}-s03\n` +
        `plan stage 4 Test Plan: ${base}-s04 (depends on: ${base}-s03)\n` +
        `plan stage 5 Implementation: ${base}-s05 (depends on: ${base}-s04)\n` +
        'dry run: 3 stage task(s) for agent claude; nothing was sent to the server\n',
    );
    expect(existsSync(join(root, 'wproj'))).toBe(false);
    expect((await tasksOf('wproj')).size).toBe(0);
  });

  it('workflow run creates one task per stage, each depending on the previous stage', async () => {
    const base = 'task-20260101-000000-wfrun';
    const r = await runCli(CONDUCTOR, ['workflow', 'run', '--project', 'wproj', '--task', base, '--agent', 'fake', '--from-stage', '10'], env);

    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`created ${base}-s10 (status started)\ncreated ${base}-s11 (status started)\ncreated ${base}-s12 (status started)\n`);
    const listed = await tasksOf('wproj');
    expect([...listed.keys()].sort()).toEqual([`${base}-s10`, `${base}-s11`, `${base}-s12`]);
    expect(listed.get(`${base}-s10`)!.depends_on ?? []).toEqual([]);
    expect(listed.get(`${base}-s11`)!.depends_on).toEqual([`${base}-s10`]);
    expect(listed.get(`${base}-s12`)!.blocked_by).toEqual([`${base}-s11`]);
    const prompt = readFileSync(join(root, 'wproj', `${base}-s11`, 'TASK.md'), 'utf8');
    expect(prompt).toBe(`${workflowStagePrompt('THE_PROMPT_v5', 11, `wproj/${base} (under the conductor runs root)`)}\n`);
  });

  it('bad input is a one-line usage error and sends nothing', async () => {
    const api = await new FakeApi().start();
    try {
      const cases = [
        ['workflow', 'run', '--project', 'p', '--task', 'not-a-task'],
        ['workflow', 'run', '--task', 'task-20260101-000000-x1'],
        ['workflow', 'run', '--project', 'p', '--task', 'task-20260101-000000-x1', '--from-stage', '13'],
        ['workflow', 'run', '--project', 'p', '--task', `task-20260101-000000-${'a'.repeat(48)}`],
        ['goal', 'run'],
        ['goal', 'run', '--spec', join(dir, 'missing.yaml')],
      ];
      for (const args of cases) {
        const r = await runCli(CONDUCTOR, [...args, '--server', api.url], env, { cwd: dir });
        expect({ args, code: r.code, lines: r.stderr.split('\n').length }).toEqual({ args, code: 2, lines: 2 });
        expect(r.stderr).toMatch(/^Error: /);
      }
      expect(api.requests).toEqual([]);
    } finally {
      await api.stop();
    }
  });

  it('a server error is "Error: server returned <code>: <message>" and stops at the failing task', async () => {
    const api = await new FakeApi().start();
    try {
      let calls = 0;
      api.on('POST', '/api/v1/tasks', (req, res) => {
        calls++;
        const body = JSON.parse(req.body) as { task_id: string };
        const status = calls === 2 ? 409 : 201;
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(calls === 2 ? { error: { code: 'CONFLICT', message: 'dependency cycle detected: a -> b -> a' } } : { task_id: body.task_id, run_id: 'r1', status: 'started' }));
      });
      const base = 'task-20260101-000000-wferr';
      const r = await runCli(CONDUCTOR, ['workflow', 'run', '--project', 'p', '--task', base, '--from-stage', '0', '--to-stage', '3', '--server', api.url, '--api-key', 'k1'], env);

      expect(r.code).toBe(1);
      expect(r.stdout).toBe(`created ${base}-s00 (status started)\n`);
      expect(r.stderr).toBe('Error: server returned 409: dependency cycle detected: a -> b -> a\n');
      expect(api.requests).toHaveLength(2);
      expect(api.requests[0].headers.authorization).toBe('Bearer k1');
      expect(JSON.parse(api.requests[1].body)).toMatchObject({ project_id: 'p', task_id: `${base}-s01`, agent_type: 'claude', depends_on: [`${base}-s00`] });
    } finally {
      await api.stop();
    }
  });
});
