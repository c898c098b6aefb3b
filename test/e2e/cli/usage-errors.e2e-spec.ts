import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CONDUCTOR, runCli, type CliResult } from '../../utils/cli';
import { Sandbox } from './inspect-helpers';

describe('usage errors of command groups and the conductor help', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  it.each([
    [['bus', 'nosuch'], 'run-agent bus', 'post, read, repair, discover'],
    [['server', 'task', 'nosuch'], 'run-agent server task', 'status, stop, list, delete, resume, pull-request, logs, runs'],
    [['task', 'stray-prompt'], 'run-agent task', 'resume, delete, cancel'],
    [['shell-setup', 'bogus'], 'run-agent shell-setup', 'install, uninstall'],
    [['output', 'stray'], 'run-agent output', 'synthesize'],
  ])('run-agent %j is a one-line usage error (exit 2) naming the subcommands', async (args, path, subcommands) => {
    const r = await sb.run(args);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `Error: unknown command '${args[args.length - 1]}' for '${path}' (subcommands: ${subcommands})\n`]);
  });

  it.each([
    [['stauts'], "Error: unknown command 'stauts' (did you mean status?)"],
    [['bus', 'read', '--last', '1'], "Error: unknown option '--last' (did you mean --task?)"],
    [['status', '--bogus'], "Error: unknown option '--bogus'"],
    [['job', '--agent'], "Error: option '--agent <name>' argument missing"],
  ])('commander usage errors are one line "Error: …" with exit 2: %j', async (args, message) => {
    const r = await sb.run(args);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `${message}\n`]);
  });

  it('task resume of a task whose start was cut before TASK.md is a one-line usage error (exit 2) and changes nothing', async () => {
    const taskDir = join(sb.root, 'proj', 'task-20260101-000000-cut');
    mkdirSync(taskDir, { recursive: true });
    const r = await sb.run(['task', 'resume', '--root', sb.root, '--project', 'proj', '--task', 'task-20260101-000000-cut']);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `Error: task task-20260101-000000-cut never started: TASK.md not found in task directory ${taskDir}; start it with \`run-agent task\`\n`]);
    expect(readdirSync(taskDir)).toEqual([]);
  });

  it('a group without a subcommand still prints its help', async () => {
    const r = await sb.run(['bus']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: run-agent bus/);
  });

  it('conductor --help says what no subcommand does and describes its client subcommands as clients', async () => {
    const r = await runConductor(sb, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^conductor with no command starts the API server/);
    const flat = r.stdout.replace(/\s+/g, ' ');
    expect(flat).toContain('job [options] Submit and list jobs via the server API (client of a running server; = run-agent server job)');
    expect(flat).not.toContain('Run one agent once');
    const plain = await sb.run(['--help']);
    expect(plain.stdout).toContain('Run one agent once');
    expect(plain.stdout).not.toContain('client of a running server');
  });
});

function runConductor(sb: Sandbox, args: string[]): Promise<CliResult> {
  return runCli(args, { bin: CONDUCTOR, cwd: sb.dir, env: sb.env() });
}
