/**
 * Issue #30 defects 3, 6 and 7 against the built CLI: watch waits for the Ralph loop (not one
 * attempt), unknown names exit 2 with a did-you-mean, errors are JSON under --json, and
 * diff/merge find the runs root of --config.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sandbox, writeRun } from './inspect-helpers';

const P = 'proj';
const T = 'task-20260101-000000-restart';

describe('issue #30 CLI conventions', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  const configFile = (): string => {
    const file = join(sb.dir, 'elsewhere.yaml');
    writeFileSync(file, `agents:\n  fake:\n    type: command\n    command: fake-command-agent\nstorage:\n  runs_dir: ${sb.root}\n`);
    return file;
  };

  it('defect 3: watch reports a restarting task until the loop ends, not "All tasks complete." after the first attempt', async () => {
    const config = configFile();
    const env = { FAKE_AGENT_EXIT_SEQUENCE: '1,0', FAKE_AGENT_DONE_ON_ATTEMPT: '2' };
    const task = sb.run(['task', '--config', config, '--project', P, '--task', T, '--prompt', 'hi', '--restart-delay', '1s'], { env });
    const watch = await sb.run(['watch', '--config', config, '--project', P, '--task', T, '--allow-missing', '--json']);
    const loop = await task;
    expect(loop.code).toBe(0);
    expect(watch.code).toBe(0);
    const polls = watch.stdout.trim().split('\n').map((l) => JSON.parse(l) as { tasks: { status: string; done: boolean }[]; all_done: boolean });
    // the first attempt failed and the loop restarted it: never complete in between
    expect(polls.filter((p) => p.all_done)).toHaveLength(1);
    expect(polls[polls.length - 1]).toMatchObject({ all_done: true, tasks: [{ status: 'completed', done: true }] });
    expect(loop.stdout + loop.stderr).toContain('restarting');
  });

  it('defect 3: watch on an unknown task exits 2 at once with a did-you-mean', async () => {
    writeRun(sb.root, P, T, '20260101-1200000000-1-1');
    const r = await sb.run(['watch', '--root', sb.root, '--project', P, '--task', 'task-20260101-000000-restrt']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(`Error: unknown task "task-20260101-000000-restrt" in project "${P}" (did you mean "${T}"?)\n`);
  });

  it('defect 6: diff --config finds the task in the runs root of that config', async () => {
    mkdirSync(join(sb.root, P, T), { recursive: true });
    const r = await sb.run(['diff', '--config', configFile(), '--project', P, '--task', T], { cwd: sb.home });
    expect(r.stderr).not.toMatch(/not found|unknown task/);
    expect(r.stderr).toMatch(/no worktree/);
  });

  it('defect 6: merge --config finds the task in the runs root of that config (without it: unknown project)', async () => {
    mkdirSync(join(sb.root, P, T), { recursive: true });
    const merged = await sb.run(['merge', '--config', configFile(), '--project', P, '--task', T], { cwd: sb.home });
    expect(merged.stderr.trim()).toBe('Error: task has no worktree (it was not started with --worktree)');
    expect(merged.code).toBe(2);
    const withoutConfig = await sb.run(['merge', '--project', P, '--task', T], { cwd: sb.home });
    expect(withoutConfig.stderr).toMatch(/unknown project "proj"/);
  });

  it('defect 7: unknown projects and tasks, a bad --status and a missing config exit 2 with one line', async () => {
    writeRun(sb.root, P, T, '20260101-1200000000-1-1');
    const cases: [string[], RegExp][] = [
      [['status', '--root', sb.root, '--project', 'prij'], /^Error: unknown project "prij" in runs root .* \(did you mean "proj"\?\)\n$/],
      [['status', '--root', sb.root, '--project', P, '--task', 'task-20260101-000000-restar'], /did you mean "task-20260101-000000-restart"/],
      [['usage', '--root', sb.root, '--project', 'nope'], /^Error: unknown project "nope"/],
      [['bus', 'read', '--root', sb.root, '--project', 'nope'], /^Error: unknown project "nope"/],
      [['status', '--root', sb.root, '--project', P, '--status', 'runing'], /^Error: invalid --status "runing" \(did you mean "running"\?\)/],
      [['list', '--root', sb.root, '--project', P, '--status', 'runing'], /did you mean "running"/],
      [['output', '--root', sb.root, '--project', P, '--task', 'task-20260101-000000-nope'], /^Error: unknown task/],
      [['task', '--config', join(sb.dir, 'missing.yaml'), '--project', P, '--task', T, '--prompt', 'x'], /missing\.yaml/],
      [['task', '--root', sb.root, '--project', P, '--task', 'task-20260101-000000-new', '--prompt', 'x'], /^Error: no config found: create config\.yaml \(see README\) or pass --config/],
      [['task', '--config', configFile(), '--project', P, '--task', 'task-20260101-000000-new', '--prompt', 'x', '--agent', 'fak'], /^Error: unknown agent "fak" \(did you mean "fake"\?\)\n$/],
      [['server', 'status', '--server', 'ftp://localhost:1'], /^Error: invalid --server URL "ftp:\/\/localhost:1": only http and https are supported\n$/],
      [['server', 'status', '--server', 'not a url'], /^Error: invalid --server URL "not a url"/],
    ];
    for (const [args, message] of cases) {
      const r = await sb.run(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
    }
  });

  it('defect 7: an agent typo in job (any form) or task exits 2 with a did-you-mean and creates nothing', async () => {
    const withConfig = ['--config', configFile(), '--project', P, '--prompt', 'x', '--agent', 'fak'];
    const noConfig = ['--root', sb.root, '--project', P, '--prompt', 'x'];
    const named = /^Error: unknown agent "fak" \(did you mean "fake"\?\)\n$/;
    const typed = /^Error: unknown agent type "cluade" \(did you mean "claude"\?\): without a config the agent must be a type: claude, codex, gemini, perplexity, xai\n$/;
    const cases: [string[], RegExp][] = [
      [['job', ...withConfig], named],
      [['job', ...withConfig, '--task', T], named],
      [['job', ...withConfig, '--follow'], named],
      [['job', ...withConfig, '--run-id', '20260101-1200000000-1-1', '--task', T], named],
      [['job', 'batch', ...withConfig], named],
      [['task', ...withConfig], named],
      [['job', ...noConfig, '--agent', 'cluade'], typed],
      [['task', ...noConfig, '--agent', 'cluade'], typed],
      [['job', ...noConfig], /^Error: no config found: create config\.yaml \(see README\) or pass --config/],
    ];
    for (const [args, message] of cases) {
      const r = await sb.run(args);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(message);
      expect({ args, left: readdirSync(sb.root) }).toEqual({ args, left: [] });
    }
  });

  it('defect 7: under --json the error is one JSON line on stderr in the API envelope', async () => {
    writeRun(sb.root, P, T, '20260101-1200000000-1-1');
    const r = await sb.run(['status', '--root', sb.root, '--project', 'prij', '--json']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(JSON.parse(r.stderr)).toEqual({ error: { code: 'NOT_FOUND', message: expect.stringContaining('unknown project "prij"') } });
    const usage = await sb.run(['status', '--root', sb.root, '--project', P, '--status', 'runing', '--json']);
    expect(JSON.parse(usage.stderr).error.code).toBe('USAGE');
    const parse = await sb.run(['status', '--bogus', '--json']);
    expect(parse.code).toBe(2);
    expect(JSON.parse(parse.stderr).error).toEqual({ code: 'USAGE', message: "unknown option '--bogus'" });
  });

  it('defect 13: list --json names the parent run of a sub-agent run', async () => {
    writeRun(sb.root, P, T, '20260101-1200000000-1-1');
    writeRun(sb.root, P, T, '20260101-1200000000-1-2', { parent_run_id: '20260101-1200000000-1-1' });
    const r = await sb.run(['list', '--root', sb.root, '--project', P, '--task', T, '--json']);
    expect(r.code).toBe(0);
    const runs = (JSON.parse(r.stdout) as { runs: { run_id: string; parent_run_id?: string }[] }).runs;
    expect(runs.map((x) => [x.run_id, x.parent_run_id])).toEqual([
      ['20260101-1200000000-1-1', undefined],
      ['20260101-1200000000-1-2', '20260101-1200000000-1-1'],
    ]);
  });
});
