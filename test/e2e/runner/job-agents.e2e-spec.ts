import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJob } from '@app/runner';
import { RunsLayout } from '@app/storage';
import { agentEnv, busMessages, PROJECT, readJson, taskId, tempRoot } from './helpers';
import { loopParts } from '../../utils/loop-parts';

interface EnvDump {
  argv: string[];
  env: Record<string, string>;
  stdin: string;
  cwd: string;
}

const FLAGS: Record<string, string[]> = {
  claude: ['-p', '--input-format', 'text', '--output-format', 'stream-json', '--verbose', '--tools', 'default', '--permission-mode', 'bypassPermissions'],
  codex: ['exec', '--dangerously-bypass-approvals-and-sandbox', '--json', '-'],
  gemini: ['--screen-reader', 'true', '--approval-mode', 'yolo', '--output-format', 'stream-json'],
};
const VERSIONS: Record<string, string> = { claude: '2.0.0 (Claude Code)', codex: 'codex-cli 0.50.0', gemini: '0.12.0' };

describe('runJob with the fake agent CLIs', () => {
  const tmp = tempRoot();
  afterAll(() => tmp.cleanup());

  it.each(['claude', 'codex', 'gemini'])('%s: output.md, run-info.yaml, bus events, env and argv', async (agent) => {
    const task = taskId(agent);
    const layout = new RunsLayout(tmp.root);
    const taskDir = layout.taskDir(PROJECT, task);
    const dump = join(tmp.root, `${agent}-dump.json`);
    const result = await runJob({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: `  say hello from ${agent}  `,
      agent,
      env: agentEnv({ FAKE_AGENT_TEXT: `Hello from ${agent} with  spaces`, FAKE_AGENT_ENV_DUMP: dump }),
    });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    const runDir = result.runDir;
    expect(readFileSync(join(runDir, 'output.md'), 'utf8')).toBe(`Hello from ${agent} with  spaces`);
    expect(readFileSync(join(taskDir, 'TASK.md'), 'utf8')).toBe(`say hello from ${agent}\n`);

    const info = result.info!;
    expect(info).toMatchObject({ run_id: result.runId, project_id: PROJECT, task_id: task, agent, status: 'completed', exit_code: 0 });
    expect(info.agent_version).toBe(VERSIONS[agent]);
    expect(info.commandline).toBe(`${agent} ${FLAGS[agent].join(' ')} < ${join(runDir, 'prompt.md')}`);
    expect(info.pgid).toBe(info.pid);
    expect(info.cwd).toBe(taskDir);
    expect(info.end_time.getTime()).toBeGreaterThanOrEqual(info.start_time.getTime());

    const events = busMessages(layout.taskBus(PROJECT, task));
    expect(events.map((m) => m.type)).toEqual(['RUN_START', 'RUN_STOP']);
    expect(events.every((m) => m.run_id === result.runId)).toBe(true);
    expect(events[0].body).toBe(
      `run started\nrun_dir: ${runDir}\nprompt: ${join(runDir, 'prompt.md')}\nstdout: ${join(runDir, 'agent-stdout.txt')}\nstderr: ${join(runDir, 'agent-stderr.txt')}\noutput: ${join(runDir, 'output.md')}`,
    );
    expect(events[1].body).toBe(`run stopped with code 0\nrun_dir: ${runDir}\noutput: ${join(runDir, 'output.md')}`);

    const seen = readJson<EnvDump>(dump);
    expect(seen.argv).toEqual(FLAGS[agent]);
    expect(seen.stdin).toBe(readFileSync(join(runDir, 'prompt.md'), 'utf8'));
    expect(seen.stdin.endsWith(`\n---\n\nsay hello from ${agent}\n`)).toBe(true);
    expect(seen.cwd).toBe(taskDir);
    expect(seen.env).toMatchObject({
      JRUN_PROJECT_ID: PROJECT,
      JRUN_TASK_ID: task,
      JRUN_ID: result.runId,
      JRUN_PARENT_ID: '',
      JRUN_RUNS_DIR: join(taskDir, 'runs'),
      JRUN_MESSAGE_BUS: join(taskDir, 'TASK-MESSAGE-BUS.md'),
      JRUN_TASK_FOLDER: taskDir,
      JRUN_RUN_FOLDER: runDir,
      MESSAGE_BUS: join(taskDir, 'TASK-MESSAGE-BUS.md'),
      TASK_FOLDER: taskDir,
      RUN_FOLDER: runDir,
    });
    expect(seen.env.JRUN_CONDUCTOR_URL).toBeUndefined();
    expect(seen.env.CLAUDECODE).toBeUndefined();
  });

  it('a failing agent: RUN_CRASH with the stderr tail, status failed, exit code and summary', async () => {
    const task = taskId('crash');
    const result = await runJob({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'fail please',
      agent: 'claude',
      env: agentEnv({ FAKE_AGENT_EXIT: '3', FAKE_AGENT_STDERR: 'boom on stderr' }),
    });
    expect(result.ok).toBe(false);
    expect(result.fatal).toBeFalsy();
    expect(result.error).toBe('agent execution failed: exit status 3');
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 3, error_summary: 'agent exited with code 3' });
    const events = busMessages(new RunsLayout(tmp.root).taskBus(PROJECT, task));
    expect(events.map((m) => m.type)).toEqual(['RUN_START', 'RUN_CRASH']);
    expect(events[1].body).toContain('run stopped with code 3\n');
    expect(events[1].body).toContain('\n\n## stderr (last 50 lines)\nboom on stderr');
    expect(existsSync(join(result.runDir, 'output.md'))).toBe(true);
  });

  it('a child job records its parent and the preamble names it', async () => {
    const task = taskId('child');
    const parent = await runJob({ ...loopParts, root: tmp.root, projectId: PROJECT, taskId: task, prompt: 'parent', agent: 'codex', env: agentEnv() });
    const child = await runJob({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'child',
      agent: 'codex',
      parentRunId: parent.runId,
      conductorUrl: 'http://127.0.0.1:14355',
      env: agentEnv(),
    });
    expect(child.ok).toBe(true);
    expect(child.info?.parent_run_id).toBe(parent.runId);
    const prompt = readFileSync(join(child.runDir, 'prompt.md'), 'utf8');
    expect(prompt).toContain(`\nJRUN_PARENT_ID=${parent.runId}\n`);
    expect(prompt).toContain('\nJRUN_CONDUCTOR_URL=http://127.0.0.1:14355\nWrite output.md to');
  });
});
