/**
 * Issue #12 (field defects): one regression test per CLI item, against the built CLI.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { readRunInfo } from '@app/storage';
import { FAKE_AGENT } from '../../utils/api-app';
import { RUN_AGENT, Sandbox, type CliResult, writeRun, running } from './inspect-helpers';
import { requireBuild, snapshotTree } from './bus-helpers';

const P = 'proj';
const T = 'task-20260101-000000-field';

describe('issue #12 field defects (CLI)', () => {
  let sb: Sandbox;
  beforeAll(() => requireBuild());
  beforeEach(() => {
    sb = new Sandbox();
    mkdirSync(join(sb.root, P, T), { recursive: true });
  });
  afterEach(() => sb.cleanup());

  /** Runs bin/run-agent with stdin content (the Sandbox runner ignores stdin). */
  const runWithInput = (args: string[], input: string, env: Record<string, string> = {}, cwd = sb.dir): CliResult => {
    const r = spawnSync(process.execPath, [RUN_AGENT, ...args], { cwd, env: sb.env(env), input, encoding: 'utf8' });
    return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  };
  const taskBus = () => join(sb.root, P, T, 'TASK-MESSAGE-BUS.md');
  const post = (args: string[], input = '', env: Record<string, string> = {}, cwd?: string) =>
    runWithInput(['bus', 'post', '--root', sb.root, '--project', P, '--task', T, ...args], input, env, cwd);

  describe('item 1: values starting with a dash are taken as given', () => {
    it.each([
      [['--body', '- item one'], '- item one'],
      [['--body', '-x'], '-x'],
      [['--body=-x'], '-x'],
      [['--body', '--help'], '--help'],
      [['--type', 'T-1', '--body', '-h'], '-h'],
    ])('bus post %j (fast path)', (args, body) => {
      const r = post(args);
      expect([r.code, r.stderr]).toEqual([0, '']);
      const [m] = readMessages(taskBus());
      expect(m.body).toBe(body);
      if (args[0] === '--type') expect(m.type).toBe('T-1');
    });

    it('a dash-leading --type is taken as its value and refused by the header validator, not by the parser', () => {
      const r = post(['--type', '-T-', '--body', 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Error: invalid message type "-T-"/);
      expect(existsSync(taskBus())).toBe(false);
    });

    it('a subcommand value named like a flag of its group reaches the subcommand (nest-commander)', async () => {
      const r = await sb.run(['task', 'cancel', '--root', sb.root, '--project', P, '--task', T, '--reason', '--prompt']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(readFileSync(join(sb.root, P, T, 'CANCELLED'), 'utf8')).toContain('reason: --prompt\n');
    });

    it('a dash value of a Nest-served command is accepted (status --task -x is an invalid id, not an option)', async () => {
      const r = await sb.run(['status', '--root', sb.root, '--project', P, '--task', '-x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Error: invalid task ID "-x"/);
    });
  });

  describe('item 2: body limit', () => {
    const report = `${'Résumé — ünïcødé line of a long report.\n'.repeat(1600)}`;

    it('accepts a 60 KB report with non-ASCII text (over the old 64 KiB limit)', () => {
      expect(Buffer.byteLength(report)).toBeGreaterThan(65536);
      const r = post([], report);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(readMessages(taskBus())[0].body).toBe(report);
    });

    it('is configurable by flag, environment and config, refusing with exit 2 and nothing written', () => {
      writeFileSync(join(sb.dir, 'config.yaml'), 'storage:\n  max_message_body_bytes: 100\n');
      const before = snapshotTree(sb.root);
      const body = 'y'.repeat(200);
      const byConfig = post(['--body', body]);
      expect(byConfig.code).toBe(2);
      expect(byConfig.stderr).toMatch(/^Error: message body is 200 bytes, over the 100-byte limit; .*--link/);
      const byEnv = post(['--body', body], '', { CONDUCTOR_MAX_MESSAGE_BODY_BYTES: '150' });
      expect(byEnv.stderr).toMatch(/over the 150-byte limit/);
      const byFlag = post(['--max-body-bytes', '199', '--body', body], '', { CONDUCTOR_MAX_MESSAGE_BODY_BYTES: '150' });
      expect(byFlag.stderr).toMatch(/over the 199-byte limit/);
      expect(snapshotTree(sb.root)).toEqual(before);
      const allowed = post(['--max-body-bytes', '200', '--body', body]);
      expect(allowed.code).toBe(0);
      const bad = post(['--max-body-bytes', 'lots', '--body', 'x']);
      expect([bad.code, bad.stderr]).toEqual([2, 'Error: invalid --max-body-bytes "lots": must be a positive number of bytes\n']);
    });
  });

  describe('item 10: empty bodies', () => {
    it('refuses an empty stdin body with exit 2 and writes nothing; --allow-empty posts it', () => {
      const before = snapshotTree(sb.root);
      const r = post([], '');
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Error: message body is empty/);
      expect(snapshotTree(sb.root)).toEqual(before);
      const allowed = post(['--allow-empty'], '');
      expect(allowed.code).toBe(0);
      expect(readMessages(taskBus()).map((m) => m.body)).toEqual(['']);
    });
  });

  describe('item 5: one set of scope options, one exit code per error class', () => {
    it.each([['status'], ['stop'], ['list'], ['output'], ['task', 'cancel'], ['task', 'delete'], ['task'], ['job'], ['resume'], ['watch'], ['bus', 'post'], ['bus', 'read']])(
      '%j accepts --root, --config, --project and --task',
      async (...cmd) => {
        const r = await sb.run([...cmd, '--help']);
        expect(r.code).toBe(0);
        for (const flag of ['--root <dir>', '--config <file>', '--project <id>', '--task <id>']) expect(r.stdout).toContain(flag);
      },
    );

    it('bus post and bus read take --config (runs root and body limit from that file)', () => {
      const cfg = join(sb.dir, 'bus.yaml');
      writeFileSync(cfg, `storage:\n  runs_dir: ${sb.root}\n  max_message_body_bytes: 10\n`);
      const big = runWithInput(['bus', 'post', '--config', cfg, '--project', P, '--body', 'x'.repeat(11)], '');
      expect([big.code, big.stderr]).toEqual([2, expect.stringMatching(/^Error: message body is 11 bytes, over the 10-byte limit/)]);
      const ok = runWithInput(['bus', 'post', '--config', cfg, '--project', P, '--body', 'short'], '');
      expect([ok.code, ok.stderr]).toEqual([0, '']);
      const read = runWithInput(['bus', 'read', '--config', cfg, '--project', P], '');
      expect(read.stdout).toMatch(/\(INFO\) short\n$/);
    });

    it('status and stop take the runs root from --config', async () => {
      writeRun(sb.root, P, T, '20260101-0000000000-1-1');
      const cfg = join(sb.dir, 'other.yaml');
      writeFileSync(cfg, `storage:\n  runs_dir: ${sb.root}\n`);
      const status = await sb.run(['status', '--config', cfg, '--project', P, '--json']);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout).tasks.map((t: { task_id: string }) => t.task_id)).toEqual([T]);
      const stop = await sb.run(['stop', '--config', cfg, '--project', P, '--task', T]);
      expect(stop.stderr).not.toMatch(/unknown option/);
    });

    it.each([
      [['bus', 'post', '--project', 'Bad_Project', '--body', 'x']],
      [['bus', 'read', '--project', '../x']],
      [['status', '--project', 'Bad_Project']],
      [['list', '--project', 'Bad_Project']],
      [['stop', '--project', P, '--task', 'not-a-task']],
      [['task', 'cancel', '--project', P, '--task', 'not-a-task', '--reason', 'r']],
    ])('an invalid id is exit 2: %j', async (args) => {
      const r = await sb.run([...args, '--root', sb.root]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Error: invalid (project|task) ID/);
    });
  });

  describe('items 6, 7, 9: stopped, cancelled, running and the agent name', () => {
    const CANCELLED_T = 'task-20260101-000000-cancelled';
    const RUNNING_T = 'task-20260101-000000-running';
    const stoppedBy = { status: 'failed' as const, exit_code: 143, error_summary: 'stopped by run-agent stop (pid 1) (SIGTERM)', agent: 'command', agent_name: 'smart' };

    beforeEach(() => {
      writeRun(sb.root, P, T, '20260101-0000000000-1-1', stoppedBy);
      writeRun(sb.root, P, CANCELLED_T, '20260101-0000000000-1-1', stoppedBy);
      writeFileSync(join(sb.root, P, CANCELLED_T, 'CANCELLED'), 'cancelled_at: 2026-01-01T00:00:00Z\nreason: r\n');
      writeRun(sb.root, P, RUNNING_T, '20260101-0000000000-1-1', { ...running(sb.livePid()), agent_name: 'smart' });
    });

    it('status shows stopped / cancelled, no exit code while running, and the agent name', async () => {
      const r = await sb.run(['status', '--root', sb.root, '--project', P, '--json']);
      expect(r.code).toBe(0);
      const rows = Object.fromEntries(JSON.parse(r.stdout).tasks.map((t: { task_id: string }) => [t.task_id, t]));
      expect(rows[T]).toMatchObject({ status: 'stopped', exit_code: 143, agent_name: 'smart' });
      expect(rows[CANCELLED_T]).toMatchObject({ status: 'cancelled', exit_code: 143 });
      expect(rows[RUNNING_T]).toMatchObject({ status: 'running', exit_code: null, agent_name: 'smart' });
      const text = await sb.run(['status', '--root', sb.root, '--project', P]);
      expect(text.stdout).toMatch(new RegExp(`${RUNNING_T}\\s+running\\s+-\\s`));
      expect(text.stdout).not.toMatch(/\s-1\s/);
      const filtered = await sb.run(['status', '--root', sb.root, '--project', P, '--status', 'cancelled', '--concise']);
      expect(filtered.stdout.split('\t')[0]).toBe(CANCELLED_T);
    });

    it('list shows the state, a blank exit code while running and the agent name', async () => {
      const tasks = await sb.run(['list', '--root', sb.root, '--project', P]);
      expect(tasks.stdout).toMatch(new RegExp(`${CANCELLED_T}\\s+1\\s+cancelled`));
      expect(tasks.stdout).toMatch(new RegExp(`${T}\\s+1\\s+stopped`));
      const runs = await sb.run(['list', '--root', sb.root, '--project', P, '--task', RUNNING_T]);
      expect(runs.stdout).toMatch(/AGENT/);
      expect(runs.stdout).toMatch(/20260101-0000000000-1-1\s+running\s+-\s+\S+ \S+\s+running\s+smart/);
      const stopped = await sb.run(['list', '--root', sb.root, '--project', P, '--task', T]);
      expect(stopped.stdout).toMatch(/20260101-0000000000-1-1\s+stopped\s+143\s/);
    });

    it('watch prints the real duration and no invented transition on its first poll', async () => {
      const start = new Date('2026-01-01T00:00:00.000Z');
      const DONE_T = 'task-20260101-000000-watched';
      writeRun(sb.root, P, DONE_T, '20260101-0000000000-1-1', { start_time: start, end_time: new Date(start.getTime() + 2500) });
      const r = await sb.run(['watch', '--root', sb.root, '--project', P, '--task', DONE_T, '--task', T]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`${DONE_T}\\s+\\[completed\\] completed\\s+duration: 2\\.5s`));
      expect(r.stdout).toMatch(new RegExp(`${T}\\s+\\[stopped\\s*\\] stopped`));
      expect(r.stdout).not.toContain('transition:');
      expect(r.stdout).toContain('stopped=1');
    });
  });

  describe('items 4 and 7: monitor loads ./config.yaml with --agent, records agent_name, fails when nothing launched', () => {
    const TODO_T = 'task-20260101-000000-todo';
    beforeEach(() => {
      writeFileSync(join(sb.dir, 'config.yaml'), `agents:\n  smart:\n    type: command\n    command: ${FAKE_AGENT}\n`);
      writeFileSync(join(sb.dir, 'TODOs.md'), `- [ ] ${TODO_T} do the thing\n`);
    });

    it('--agent smart names the config agent; the run records agent_name: smart', async () => {
      const r = await sb.run(['monitor', '--root', sb.root, '--project', P, '--agent', 'smart', '--once']);
      expect(r.stdout).not.toContain('[ERROR]');
      expect(r.code).toBe(0);
      const runsDir = join(sb.root, P, TODO_T, 'runs');
      const [run] = readdirSync(runsDir);
      const info = readRunInfo(join(runsDir, run, 'run-info.yaml'));
      expect(info).toMatchObject({ agent: 'command', agent_name: 'smart', status: 'completed' });
      expect(readFileSync(join(runsDir, run, 'run-info.yaml'), 'utf8')).toContain('agent_name: smart\n');
    });

    it('exits non-zero when a launch it was asked for failed', async () => {
      const r = await sb.run(['monitor', '--root', sb.root, '--project', P, '--agent', 'nosuch', '--once']);
      expect(r.stdout).toContain('[ERROR]');
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^Error: monitor: 1 task\(s\) failed to start or run\n$/);
      expect(existsSync(join(sb.root, P, TODO_T, 'DONE'))).toBe(false);
    });
  });
});
