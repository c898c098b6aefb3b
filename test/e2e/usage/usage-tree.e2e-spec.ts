import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunsLayout } from '@app/storage';
import { busMessages, cliEnv, PROJECT, runInfos, taskId, tempRoot } from '../runner/helpers';
import { runCli } from '../../utils/cli';

// Acceptance (#18): usage in run-info and in the aggregated report equal the sums of what the
// fake streams emitted, for a tree of three runs (root job → child job → grandchild job).
describe('usage accounting over a tree of three runs (real CLI processes, fake agents in the real formats)', () => {
  const tmp = tempRoot();
  const layout = new RunsLayout(tmp.root);
  const home = mkdtempSync(join(tmpdir(), 'usage-home-'));
  afterAll(() => {
    tmp.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  const job = async (agent: string, task: string, usage: string, parent?: string) => {
    const args = ['job', '--root', tmp.root, '--project', PROJECT, '--task', task, '--agent', agent, '--prompt', 'work'];
    if (parent) args.push('--parent-run-id', parent);
    const r = await runCli(args, { env: cliEnv(home, { FAKE_AGENT_USAGE: usage }) });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const infos = runInfos(layout.taskDir(PROJECT, task));
    return infos[infos.length - 1];
  };

  it('run-info carries each stream\'s usage; usage --task sums the tree; status/list --json show it; usage --project sums all', async () => {
    const [a, b, c] = [taskId('root'), taskId('child'), taskId('grandchild')];
    const root = await job('claude', a, '1000,200,50,25,0.25');
    const child = await job('codex', b, '300,40,10', root.run_id);
    const grand = await job('gemini', c, '70,7,3', child.run_id);

    expect(root.usage).toEqual({ input_tokens: 1000, output_tokens: 200, cache_read_tokens: 50, cache_write_tokens: 25, cost_usd: 0.25 });
    expect(child.usage).toEqual({ input_tokens: 300, output_tokens: 40, cache_read_tokens: 10, cache_write_tokens: 0 });
    expect(grand.usage).toEqual({ input_tokens: 70, output_tokens: 7, cache_read_tokens: 3, cache_write_tokens: 0 });
    expect(root.session_id).toMatch(/^fake-\d+$/);
    expect(child.session_id).toMatch(/^0199a1b2-\d+$/);
    expect(grand.session_id).toMatch(/^fake-\d+$/);

    const env = cliEnv(home);
    const report = await runCli(['usage', '--root', tmp.root, '--project', PROJECT, '--task', a, '--json'], { env });
    expect(report.code).toBe(0);
    const json = JSON.parse(report.stdout);
    expect(json.tree).toEqual({
      runs: 3,
      total_tokens: 1000 + 200 + 300 + 40 + 70 + 7,
      usage: { input_tokens: 1370, output_tokens: 247, cache_read_tokens: 63, cache_write_tokens: 25, cost_usd: 0.25 },
    });
    expect(json.total_tokens).toBe(1200);
    expect(json.by_agent.map((r: { key: string; total_tokens: number }) => [r.key, r.total_tokens])).toEqual([['claude', 1200], ['codex', 340], ['gemini', 77]]);

    const all = JSON.parse((await runCli(['usage', '--root', tmp.root, '--json'], { env })).stdout);
    expect(all.runs).toBe(3);
    expect(all.usage).toEqual(json.tree.usage);
    const table = await runCli(['usage', '--root', tmp.root, '--project', PROJECT, '--task', a], { env });
    expect(table.stdout).toMatch(new RegExp(`^tree +${a} +3 +1370 +247 +63 +25 +1617 +0\\.25 *$`, 'm'));

    const status = JSON.parse((await runCli(['status', '--root', tmp.root, '--project', PROJECT, '--task', b, '--json'], { env })).stdout);
    expect(status.tasks[0].usage).toEqual({ input_tokens: 300, output_tokens: 40, cache_read_tokens: 10, cache_write_tokens: 0, total_tokens: 340 });
    const list = JSON.parse((await runCli(['list', '--root', tmp.root, '--project', PROJECT, '--json'], { env })).stdout);
    expect(list.tasks.find((t: { task_id: string }) => t.task_id === a).usage.total_tokens).toBe(1200);
    const listTable = await runCli(['list', '--root', tmp.root, '--project', PROJECT, '--usage'], { env });
    expect(listTable.stdout).toMatch(new RegExp(`^${c} .* 77 +- *$`, 'm'));
  });

  it('bad input: one error line, exit 2, nothing written', async () => {
    const env = cliEnv(home);
    const t = taskId('bad');
    for (const [flag, value, message] of [
      ['--max-tokens', '-5', 'max tokens must be a positive integer'],
      ['--max-cost-usd', 'lots', 'max cost usd must be a positive number'],
      ['--max-wall-time', 'soon', 'max wall time must be a positive duration like 30m'],
      ['--resume-mode', 'later', 'resume mode must be continue or fresh'],
    ]) {
      const r = await runCli(['task', '--root', tmp.root, '--project', PROJECT, '--task', t, '--agent', 'claude', '--prompt', 'x', flag, value], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`Error: ${message}, got "${value}"\n`);
    }
    expect(existsSync(layout.taskDir(PROJECT, t))).toBe(false);
    const since = await runCli(['usage', '--root', tmp.root, '--since', 'yesterday'], { env });
    expect(since.code).toBe(2);
    expect(since.stderr).toBe('Error: --since must be an RFC 3339 time or a duration like 24h, got "yesterday"\n');
    const project = await runCli(['usage', '--root', tmp.root, '--project', '../x'], { env });
    expect(project.code).toBe(2);
    expect(busMessages(layout.taskBus(PROJECT, t))).toEqual([]);
  });
});
