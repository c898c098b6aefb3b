import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readMessages } from '@app/messagebus';
import { P, Sandbox, T1, T2, writeRun } from './inspect-helpers';

const RUN = '20260101-1200000000-10-1';

/** D7/D8: inside an agent (JRUN_* set, no --root) every command finds the runs root the agent runs in. */
describe('commands run by an agent find its runs root from $JRUN_TASK_FOLDER', () => {
  let sb: Sandbox;
  let agentEnv: Record<string, string>;

  beforeEach(() => {
    sb = new Sandbox();
    writeRun(sb.root, P, T1, RUN, { status: 'completed', exit_code: 0 });
    const taskDir = join(sb.root, P, T1);
    agentEnv = { JRUN_PROJECT_ID: P, JRUN_TASK_ID: T1, JRUN_TASK_FOLDER: taskDir, JRUN_RUN_FOLDER: join(taskDir, 'runs', RUN) };
  });
  afterEach(() => sb.cleanup());

  it('status, list, output and stop use the root of the task folder, not ~/.run-agent/runs', async () => {
    const status = await sb.run(['status', '--json'], { env: agentEnv });
    expect([status.code, status.stderr]).toEqual([0, '']);
    expect(JSON.parse(status.stdout).tasks).toEqual([expect.objectContaining({ task_id: T1, status: 'completed', latest_run: RUN })]);

    const list = await sb.run(['list', '--project', P], { env: agentEnv });
    expect([list.code, list.stdout]).toEqual([0, expect.stringContaining(T1)]);

    const output = await sb.run(['output', '--file', 'prompt'], { env: agentEnv });
    expect(output.stderr).toMatch(/^Error: file not found: .*prompt\.md\n$/);
    expect(output.stderr).toContain(join(sb.root, P, T1, 'runs', RUN));

    const stop = await sb.run(['stop'], { env: agentEnv });
    expect([stop.code, stop.stderr]).toEqual([1, `Error: no running runs found for project ${P} task ${T1}\n`]);

    expect(existsSync(join(sb.home, '.run-agent'))).toBe(false);
  });

  it('bus post/read: no flags use $JRUN_MESSAGE_BUS; explicit --project/--task name their own bus under the same root (D7)', async () => {
    const taskDir = join(sb.root, P, T1);
    mkdirSync(join(sb.root, P, T2), { recursive: true });
    const env = { ...agentEnv, JRUN_MESSAGE_BUS: join(taskDir, 'TASK-MESSAGE-BUS.md') };
    for (const args of [['--body', 'own task'], ['--project', P, '--type', 'FACT', '--body', 'for the project'], ['--task', T2, '--body', 'for the sibling']]) {
      const r = await sb.run(['bus', 'post', ...args], { env });
      expect([r.code, r.stderr]).toEqual([0, '']);
    }
    expect(readMessages(join(taskDir, 'TASK-MESSAGE-BUS.md')).map((m) => [m.task_id, m.body])).toEqual([[T1, 'own task']]);
    expect(readMessages(join(sb.root, P, 'PROJECT-MESSAGE-BUS.md')).map((m) => [m.type, m.body])).toEqual([['FACT', 'for the project']]);
    expect(readMessages(join(sb.root, P, T2, 'TASK-MESSAGE-BUS.md')).map((m) => [m.task_id, m.body])).toEqual([[T2, 'for the sibling']]);

    const read = await sb.run(['bus', 'read', '--project', P], { env });
    expect([read.code, read.stdout]).toEqual([0, expect.stringMatching(/\(FACT\) for the project\n$/)]);
    expect(existsSync(join(sb.home, '.run-agent'))).toBe(false);
  });

  it('an explicit --root still wins over the task folder', async () => {
    const other = new Sandbox();
    try {
      const r = await sb.run(['status', '--root', other.root, '--project', P], { env: agentEnv });
      expect([r.code, r.stderr]).toEqual([2, `Error: unknown project "${P}" in runs root ${other.root}\n`]);
    } finally {
      other.cleanup();
    }
  });
});
