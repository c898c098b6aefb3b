import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { readWorkflowState } from '@app/orchestration';
import { readRunInfo } from '@app/storage';
import { PROJECT, RUN_AGENT, Sandbox } from './helpers';
import { waitFor } from '../../utils/wait';

const TASK = 'task-20260101-000000-flow';

describe('run-agent workflow run (built CLI)', () => {
  let sb: Sandbox;
  let taskDir: string;
  let statePath: string;
  beforeEach(() => {
    sb = new Sandbox();
    taskDir = join(sb.root, PROJECT, TASK);
    statePath = join(taskDir, 'workflow', 'the-prompt-v5', 'stage-state.yaml');
  });
  afterEach(() => sb.cleanup());

  const base = (): string[] => ['workflow', 'run', '--root', sb.root, '--project', PROJECT, '--task', TASK, '--agent', 'codex'];
  const bodies = (): string[] => readMessages(join(taskDir, 'TASK-MESSAGE-BUS.md')).filter((m) => !m.type.startsWith('RUN_')).map((m) => `${m.type} ${m.body}`);

  it('runs each stage once and records the state', async () => {
    const res = await sb.run([...base(), '--from-stage', '0', '--to-stage', '1']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^workflow state: ${statePath}\ntemplate: THE_PROMPT_v5 stages: 0..1\nexecuted stages: \\[0 1\\]\ncompleted at: \\S+Z\n$`));
    const state = readWorkflowState(statePath)!;
    expect(state.stages.map((s) => [s.stage, s.name, s.status, s.attempts])).toEqual([
      [0, 'Preflight', 'completed', 1],
      [1, 'Context Gathering', 'completed', 1],
    ]);
    const runs = readdirSync(join(taskDir, 'runs'));
    expect([...state.stages.map((s) => s.run_id)].sort()).toEqual([...runs].sort());
    expect(readFileSync(join(taskDir, 'runs', state.stages[1].run_id!, 'prompt.md'), 'utf8')).toContain('Workflow stage execution request.\n\nTemplate: THE_PROMPT_v5\nStage: 1 - Context Gathering\n');
    expect(bodies()).toEqual([
      'DECISION workflow run started (fresh) template=THE_PROMPT_v5 stages=0..1',
      'PROGRESS workflow stage 0 started',
      'FACT workflow stage 0 completed',
      'PROGRESS workflow stage 1 started',
      'FACT workflow stage 1 completed',
      'FACT workflow completed template=THE_PROMPT_v5 stages=0..1',
    ]);
  });

  it('resumes after an interrupted stage: the stage left running fails, then re-runs; completed stages are skipped', async () => {
    expect((await sb.run([...base(), '--to-stage', '0'])).code).toBe(0);
    // Stage 1's agent sleeps; the workflow process is killed while it runs.
    const child = spawn(process.execPath, [RUN_AGENT, ...base(), '--to-stage', '2', '--resume'], { cwd: sb.dir, env: sb.env({ FAKE_AGENT_SLEEP_MS: '10000' }), stdio: 'ignore', detached: true });
    const pgid = await waitFor(() => {
      const s = existsSync(statePath) ? readWorkflowState(statePath) : undefined;
      if (s?.stages.find((x) => x.stage === 1)?.status !== 'running') return undefined;
      // stage 1's run by id (not by name order: ids of two processes within one second order by pid)
      const stage0 = s.stages.find((x) => x.stage === 0)?.run_id;
      const stage1 = (existsSync(join(taskDir, 'runs')) ? readdirSync(join(taskDir, 'runs')) : []).find((r) => r !== stage0);
      if (!stage1 || !existsSync(join(taskDir, 'runs', stage1, 'run-info.yaml'))) return undefined;
      const info = readRunInfo(join(taskDir, 'runs', stage1, 'run-info.yaml'));
      // the runner's own early record names the runner; wait for the agent's group
      return info.pgid > 0 && info.pid !== child.pid ? info.pgid : undefined;
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // the agent already finished
    }
    expect(readWorkflowState(statePath)!.stages.map((s) => s.status)).toEqual(['completed', 'running', 'pending']);

    const dry = await sb.run([...base(), '--to-stage', '2', '--resume', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).state.stages[1]).toMatchObject({ status: 'failed', error: 'previous run interrupted' });
    expect(readWorkflowState(statePath)!.stages[1].status).toBe('running');

    const res = await sb.run([...base(), '--to-stage', '2', '--resume', '--json']);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { skipped_stages: number[]; executed_stages: number[] };
    expect(out).toMatchObject({ skipped_stages: [0], executed_stages: [1, 2] });
    const state = readWorkflowState(statePath)!;
    expect(state.stages.map((s) => [s.status, s.attempts])).toEqual([
      ['completed', 1],
      ['completed', 2],
      ['completed', 1],
    ]);
    // completed now, by the resumed run: not before the state was created, not in the future
    expect(state.completed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(Date.parse(state.completed_at!)).toBeGreaterThanOrEqual(Date.parse(state.created_at));
    expect(Date.parse(state.completed_at!)).toBeLessThanOrEqual(Date.now());
    expect(bodies()).toContain('DECISION workflow run started (resume) template=THE_PROMPT_v5 stages=0..2');
    expect(bodies()).toContain('DECISION workflow stage 0 skipped (already completed)');
  });

  it('stops at a failed stage with exit 1 and re-runs it on --resume', async () => {
    const failed = await sb.run([...base(), '--to-stage', '1'], { env: { FAKE_AGENT_EXIT: '1' } });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('executed stages: [0]\n');
    expect(failed.stderr).toMatch(/^Error: workflow stage 0 failed: .+\n$/);
    expect(readWorkflowState(statePath)!.stages.map((s) => s.status)).toEqual(['failed', 'pending']);
    expect(bodies().some((b) => b.startsWith('ERROR workflow stage 0 failed: '))).toBe(true);
    const again = await sb.run([...base(), '--to-stage', '1', '--resume']);
    expect(again.code).toBe(0);
    expect(readWorkflowState(statePath)!.stages.map((s) => [s.status, s.attempts])).toEqual([
      ['completed', 2],
      ['completed', 1],
    ]);
  });

  it('validates flags and the state identity, writing nothing on bad input', async () => {
    expect(await sb.run([...base(), '--from-stage', '5', '--to-stage', '2'])).toMatchObject({ code: 2, stderr: 'Error: from-stage 5 must be <= to-stage 2\n' });
    expect(await sb.run([...base(), '--to-stage', '13'])).toMatchObject({ code: 2, stderr: 'Error: to-stage 13 out of range [0..12]\n' });
    expect(await sb.run([...base(), '--template', 'other'])).toMatchObject({ code: 2, stderr: 'Error: unsupported template "other": only THE_PROMPT_v5 is supported\n' });
    expect(await sb.run(['workflow', 'run', '--root', sb.root, '--project', PROJECT])).toMatchObject({ code: 2, stderr: 'Error: --task is required\n' });
    const dry = await sb.run([...base(), '--dry-run', '--from-stage', '3', '--to-stage', '4']);
    expect(dry).toMatchObject({ code: 0, stdout: `workflow state: ${statePath}\ntemplate: THE_PROMPT_v5 stages: 3..4\ndry-run planned stages: [3 4]\n` });
    expect(existsSync(taskDir)).toBe(false);
    const shared = join(sb.dir, 'state.yaml');
    expect((await sb.run([...base(), '--to-stage', '0', '--state-file', shared])).code).toBe(0);
    const other = await sb.run(['workflow', 'run', '--root', sb.root, '--project', 'other', '--task', TASK, '--agent', 'codex', '--to-stage', '0', '--state-file', shared]);
    expect(other).toMatchObject({ code: 2, stderr: `Error: workflow state ${shared} belongs to project_id "${PROJECT}", not this run\n` });
  });
});
