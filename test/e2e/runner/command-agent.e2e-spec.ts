import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runJob, stopRun } from '@app/runner';
import { loadConfig, RunsLayout, readRunInfo } from '@app/storage';
import { agentEnv, busMessages, PROJECT, readJson, taskId, tempRoot, waitFor } from './helpers';
import { loopParts } from '../../utils/loop-parts';

interface EnvDump {
  argv: string[];
  env: Record<string, string>;
  stdin: string;
  cwd: string;
}

/** D17: an agent of type `command` (recorded as agent: command, like upstream records the type) gets the same run folder, env contract, output.md and stop rules. */
describe('a generic command agent (D17) through runJob', () => {
  const tmp = tempRoot();
  let configPath: string;
  beforeAll(() => {
    configPath = join(dirname(tmp.root), 'config.yaml');
    mkdirSync(dirname(configPath), { recursive: true });
    writeFileSync(configPath, 'agents:\n  scripted:\n    type: command\n    command: fake-command-agent\n    args: ["--mode", "two words"]\n');
  });
  afterAll(() => tmp.cleanup());

  it('runs the executable with its args and the prompt on stdin; stdout becomes output.md verbatim', async () => {
    const task = taskId('command');
    const layout = new RunsLayout(tmp.root);
    const taskDir = layout.taskDir(PROJECT, task);
    const dump = join(dirname(tmp.root), 'command-dump.json');
    const result = await runJob({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'do the scripted thing',
      agent: 'scripted',
      config: loadConfig(configPath),
      env: agentEnv({ FAKE_AGENT_TEXT: '  plain *markdown*  answer', FAKE_AGENT_ENV_DUMP: dump, ANTHROPIC_API_KEY: 'must-not-leak' }),
    });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(readFileSync(join(result.runDir, 'output.md'), 'utf8')).toBe(readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8'));
    expect(readFileSync(join(result.runDir, 'output.md'), 'utf8')).toContain('  plain *markdown*  answer');
    expect(result.info).toMatchObject({ agent: 'command', status: 'completed', exit_code: 0, agent_version: '' });
    expect(busMessages(layout.taskBus(PROJECT, task)).map((m) => m.type)).toEqual(['RUN_START', 'RUN_STOP']);

    const seen = readJson<EnvDump>(dump);
    expect(seen.argv).toEqual(['--mode', 'two words']);
    expect(seen.stdin).toBe(readFileSync(join(result.runDir, 'prompt.md'), 'utf8'));
    expect(seen.cwd).toBe(taskDir);
    expect(seen.env).toMatchObject({ JRUN_PROJECT_ID: PROJECT, JRUN_TASK_ID: task, JRUN_ID: result.runId, JRUN_TASK_FOLDER: taskDir, JRUN_RUN_FOLDER: result.runDir, RUN_FOLDER: result.runDir });
    expect(seen.env.ANTHROPIC_API_KEY).toBeUndefined();
  });

  it('is stopped like any other agent: SIGTERM to its group, exit 143, status failed, who stopped it', async () => {
    const task = taskId('command-stop');
    const running = runJob({
      ...loopParts,
      root: tmp.root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'wait',
      agent: 'scripted',
      config: loadConfig(configPath),
      env: agentEnv({ FAKE_AGENT_SLEEP_MS: '60000' }),
    });
    const runsDir = new RunsLayout(tmp.root).runsDir(PROJECT, task);
    const runDir = await waitFor(() => {
      try {
        const [run] = readdirSync(runsDir);
        return run && readRunInfo(join(runsDir, run, 'run-info.yaml')).pid > 0 ? join(runsDir, run) : undefined;
      } catch {
        return undefined;
      }
    });
    await expect(stopRun(runDir, { graceMs: 5_000, stoppedBy: 'the test' })).resolves.toMatchObject({ stopped: true });
    const result = await running;
    expect(result.ok).toBe(false);
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 143 });
    expect(result.info?.error_summary).toContain('the test');
  });
});
