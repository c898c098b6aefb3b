import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT, Sandbox } from './helpers';

const TASK = 'task-20260101-000000-iter';
const AGENT = join(__dirname, 'agents', 'iterate-agent');

describe('run-agent iterate (built CLI)', () => {
  let sb: Sandbox;
  let config: string;
  beforeEach(() => {
    sb = new Sandbox();
    config = join(sb.dir, 'config.yaml');
    writeFileSync(config, `agents:\n  scripted:\n    type: command\n    command: ${AGENT}\ndefaults:\n  agent: scripted\n  timeout: 300\n`);
  });
  afterEach(() => sb.cleanup());

  const args = (extra: string[] = []): string[] => [
    'iterate',
    '--root',
    sb.root,
    '--config',
    config,
    '--project',
    PROJECT,
    '--task',
    TASK,
    '--prompt',
    'implement the feature',
    '--review-prompt',
    'review the change',
    ...extra,
  ];

  it('stops when the review says APPROVED and passes feedback to the next implementation', async () => {
    const res = await sb.run(args(), { env: { ITERATE_STATE_DIR: sb.dir, ITERATE_APPROVE_ON: '2' } });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('[iterate] iteration 1/3\n');
    expect(res.stdout).toContain('[iterate] verdict: fail\n');
    expect(res.stdout).toContain('[iterate] PASSED on iteration 2\n');
    const summary = readFileSync(join(sb.root, PROJECT, TASK, 'ITERATE-SUMMARY.md'), 'utf8');
    expect(summary).toMatch(/^# Iterate Summary\n\noutcome: passed\n\n/);
    expect(summary).toMatch(/\| 2 \| task-20260101-000000-iter-impl-iter2-\d{6} \| task-20260101-000000-iter-review-iter2-\d{6} \| pass \|\n$/);
    const tasks = readdirSync(join(sb.root, PROJECT)).filter((t) => t !== TASK && t.startsWith('task-')).sort();
    expect(tasks).toHaveLength(4);
    const impl2 = tasks.find((t) => t.includes('-impl-iter2-'))!;
    const run = readdirSync(join(sb.root, PROJECT, impl2, 'runs'))[0];
    const prompt = readFileSync(join(sb.root, PROJECT, impl2, 'runs', run, 'prompt.md'), 'utf8');
    expect(prompt).toContain('## Previous review feedback\n\nCHANGES_REQUESTED: review 1 wants more tests');
    expect(readFileSync(join(sb.root, PROJECT, impl2, 'runs', run, 'output.md'), 'utf8')).toContain('implemented 2 with feedback');
  });

  it('exhausts with exit 1 and a summary when no review approves', async () => {
    const res = await sb.run(args(['--max-iterations', '2', '--json']), { env: { ITERATE_STATE_DIR: sb.dir } });
    expect(res.code).toBe(1);
    const out = JSON.parse(res.stdout) as { outcome: string; iterations: { verdict: string }[] };
    expect(out.outcome).toBe('exhausted');
    expect(out.iterations.map((i) => i.verdict)).toEqual(['fail', 'fail']);
    expect(readFileSync(join(sb.root, PROJECT, TASK, 'ITERATE-SUMMARY.md'), 'utf8')).toContain('outcome: exhausted\n');
  });

  it('validates its flags before running anything', async () => {
    expect(await sb.run(args(['--max-iterations', '0']))).toMatchObject({ code: 2, stderr: 'Error: invalid --max-iterations "0": must be at least 1\n' });
    const noReview = await sb.run(['iterate', '--root', sb.root, '--project', PROJECT, '--task', TASK, '--prompt', 'x']);
    expect(noReview).toMatchObject({ code: 2, stderr: 'Error: one of --review-prompt or --review-prompt-file is required\n' });
    expect((await sb.run(args().map((a) => (a === TASK ? 'bad-task' : a)))).code).toBe(2);
    expect(existsSync(join(sb.root, PROJECT))).toBe(false);
    const help = await sb.run(['iterate', '--help']);
    for (const f of ['--root', '--project', '--task', '--config', '--agent', '--prompt ', '--prompt-file', '--review-prompt ', '--review-prompt-file', '--max-iterations', '--json']) expect(help.stdout).toContain(f);
  });
});
