import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { readRunInfo } from '@app/storage';
import { P, Sandbox, T1 } from './inspect-helpers';

describe('run-agent wrap', () => {
  let sb: Sandbox;
  beforeEach(() => (sb = new Sandbox()));
  afterEach(() => sb.cleanup());

  const onlyRun = (task: string): string => {
    const runsDir = join(sb.root, P, task, 'runs');
    const names = readdirSync(runsDir);
    expect(names).toHaveLength(1);
    return join(runsDir, names[0]);
  };

  it('runs the command with the terminal passed through and records a completed run', async () => {
    const r = await sb.run(['wrap', '--root', sb.root, '--project', P, '--task', T1, '--agent', 'sh', '--', '-c', 'echo "hi $JRUN_PROJECT_ID $JRUN_TASK_ID"; echo oops >&2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`hi ${P} ${T1}\n`);
    expect(r.stderr).toBe('oops\n');
    const runDir = onlyRun(T1);
    const info = readRunInfo(join(runDir, 'run-info.yaml'));
    expect(info).toMatchObject({ status: 'completed', exit_code: 0, agent: 'sh', project_id: P, task_id: T1, process_ownership: 'managed', cwd: sb.dir });
    expect(info.commandline).toBe('sh -c "echo \\"hi $JRUN_PROJECT_ID $JRUN_TASK_ID\\"; echo oops >&2"');
    expect(info.pid).toBeGreaterThan(0);
    expect(info.end_time.getTime()).toBeGreaterThanOrEqual(info.start_time.getTime());
    expect(readFileSync(join(sb.root, P, T1, 'TASK.md'), 'utf8')).toMatch(/^Wrapped CLI invocation\.\n\nagent: sh\ncommand: sh -c .*\ncwd: /);
    expect(readFileSync(join(runDir, 'prompt.md'), 'utf8')).toMatch(/^# Wrapped Invocation\n\ncommand: sh -c /);
    expect(readFileSync(join(runDir, 'output.md'), 'utf8')).toContain('console transcript was not captured');
    const events = readMessages(join(sb.root, P, T1, 'TASK-MESSAGE-BUS.md'));
    expect(events.map((m) => m.type)).toEqual(['RUN_START', 'RUN_STOP']);
    expect(events[1].body).toMatch(/^run stopped with code 0\nrun_dir: /);
    expect(events.every((m) => m.run_id === info.run_id)).toBe(true);
  });

  it('propagates the exit code and records RUN_CRASH', async () => {
    const r = await sb.run(['wrap', '--root', sb.root, '--project', P, '--task', T1, '--task-prompt', 'Fix it', '--agent', 'sh', '--', '-c', 'exit 7']);
    expect(r.code).toBe(7);
    expect(r.stderr).toBe('Error: wrapped command exited with code 7\n');
    const info = readRunInfo(join(onlyRun(T1), 'run-info.yaml'));
    expect(info).toMatchObject({ status: 'failed', exit_code: 7, error_summary: 'agent exited with code 7' });
    expect(readFileSync(join(sb.root, P, T1, 'TASK.md'), 'utf8')).toBe('Fix it\n');
    const events = readMessages(join(sb.root, P, T1, 'TASK-MESSAGE-BUS.md'));
    expect(events.map((m) => m.type)).toEqual(['RUN_START', 'RUN_CRASH']);
    expect(events[1].body).toContain('run stopped with code 7');
  });

  it('kills the command at --timeout', async () => {
    const r = await sb.run(['wrap', '--root', sb.root, '--project', P, '--task', T1, '--timeout', '300ms', '--agent', 'sh', '--', '-c', 'exec sleep 30']);
    expect(r.code).toBe(137);
    expect(readRunInfo(join(onlyRun(T1), 'run-info.yaml'))).toMatchObject({ status: 'failed', exit_code: 137, error_summary: 'timed out' });
  });

  it('records a start failure (exit 127) with RUN_CRASH', async () => {
    const r = await sb.run(['wrap', '--root', sb.root, '--project', P, '--task', T1, '--agent', 'no-such-agent-cli-xyz']);
    expect(r.code).toBe(127);
    expect(r.stderr).toBe('Error: start wrapped command: spawn no-such-agent-cli-xyz ENOENT\n');
    const info = readRunInfo(join(onlyRun(T1), 'run-info.yaml'));
    expect(info).toMatchObject({ status: 'failed', exit_code: -1, agent: 'no-such-agent-cli-xyz' });
    const events = readMessages(join(sb.root, P, T1, 'TASK-MESSAGE-BUS.md'));
    expect(events.map((m) => m.type)).toEqual(['RUN_CRASH']);
    expect(events[0].body).toMatch(/^run failed to start\nrun_dir: .*\nerror: spawn no-such-agent-cli-xyz ENOENT$/);
  });

  it('takes the project from JRUN_PROJECT_ID, generates a task and links the parent run', async () => {
    const r = await sb.run(['wrap', '--root', sb.root, '--agent', 'true'], { env: { JRUN_PROJECT_ID: P, JRUN_ID: '20260101-1200000000-9-1' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^task: task-\d{8}-\d{6}-[a-z0-9]{6}\n$/);
    const task = r.stderr.slice('task: '.length, -1);
    expect(readRunInfo(join(onlyRun(task), 'run-info.yaml')).parent_run_id).toBe('20260101-1200000000-9-1');
  });

  it('refuses missing --agent, unknown project and bad ids without creating anything', async () => {
    const noAgent = await sb.run(['wrap', '--root', sb.root, '--project', P, '--', 'x']);
    expect([noAgent.code, noAgent.stderr]).toEqual([2, 'Error: agent is required\n']);
    const noProject = await sb.run(['wrap', '--root', sb.root, '--agent', 'true']);
    expect(noProject.code).toBe(2);
    expect(noProject.stderr).toMatch(/^Error: cannot infer project/);
    const badProject = await sb.run(['wrap', '--root', sb.root, '--project', '../evil', '--task', T1, '--agent', 'true']);
    expect(badProject.code).toBe(2);
    expect(badProject.stderr).toMatch(/^Error: invalid project ID "..\/evil"/);
    const badTask = await sb.run(['wrap', '--root', sb.root, '--project', P, '--task', '../../x', '--agent', 'true']);
    expect(badTask.code).toBe(2);
    expect(badTask.stderr).toMatch(/^Error: invalid task ID/);
    expect(readdirSync(sb.root)).toEqual([]);
    expect(existsSync(join(sb.dir, 'evil'))).toBe(false);
  });
});
