import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isProcessRunning, runJob, stopRun } from '@app/runner';
import { checkSandbox } from '@app/sandbox';
import { loadConfig, readRunInfo, RunsLayout } from '@app/storage';
import { agentEnv, busMessages, PROJECT, REPO_ROOT, taskId, waitFor } from '../runner/helpers';
import { loopParts } from '../../utils/loop-parts';

/* Real bwrap, real namespaces: a probe agent tries what a prompt-injected agent would. */

const PROBE = `#!/bin/sh
try() { if "$@" >/dev/null 2>&1; then echo "ALLOWED $PROBE_STEP"; else echo "DENIED $PROBE_STEP"; fi; }
PROBE_STEP=ssh-key try cat "$HOME/.ssh/id_ed25519"
PROBE_STEP=other-task try cat "$OTHER_TASK_FILE"
PROBE_STEP=runs-root try cat "$RUNS_ROOT_FILE"
PROBE_STEP=write-outside try touch "$OUTSIDE_FILE"
PROBE_STEP=write-worktree try touch "$PWD/made-in-worktree"
PROBE_STEP=write-run-folder try touch "$JRUN_RUN_FOLDER/made-in-run"
PROBE_STEP=bus try sh -c 'printf "%s" "" >> "$JRUN_MESSAGE_BUS"'
PROBE_STEP=agent-config try cat "$HOME/.agentcfg/settings.json"
PROBE_STEP=run-agent-bus try run-agent bus post --type PROGRESS --body "from inside the sandbox"
`;

describe('sandbox: bwrap (real bubblewrap)', () => {
  let dir: string;
  let root: string;
  let home: string;
  let worktree: string;
  let probe: string;
  let otherFile: string;
  const outside = join(REPO_ROOT, `sandbox-probe-outside-${process.pid}`);

  beforeAll(() => {
    expect(checkSandbox()).toMatchObject({ ok: true });
    dir = mkdtempSync(join(tmpdir(), 'sandbox-e2e-'));
    root = join(dir, 'runs');
    home = join(dir, 'home');
    worktree = join(dir, 'worktree');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'FAKE PRIVATE KEY\n');
    mkdirSync(join(home, '.agentcfg'), { recursive: true });
    writeFileSync(join(home, '.agentcfg', 'settings.json'), '{}\n');
    mkdirSync(worktree, { recursive: true });
    mkdirSync(join(dir, 'bin'));
    probe = join(dir, 'bin', 'probe-agent');
    writeFileSync(probe, PROBE);
    chmodSync(probe, 0o755);
    const layout = new RunsLayout(root);
    const other = layout.taskDir(PROJECT, taskId('other'));
    mkdirSync(other, { recursive: true });
    otherFile = join(other, 'TASK.md');
    writeFileSync(otherFile, 'secret of another task\n');
    writeFileSync(join(root, 'root-secret.txt'), 'runs root secret\n');
    writeFileSync(
      join(dir, 'config.yaml'),
      `agents:\n  probe:\n    type: command\n    command: ${probe}\n    sandbox: bwrap\n  claude:\n    type: claude\n    sandbox: bwrap\n  sleeper:\n    type: command\n    command: fake-command-agent\n    sandbox: bwrap\n  loose:\n    type: command\n    command: ${probe}\nsandbox:\n  home_read: ["~/.agentcfg"]\n`,
    );
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { force: true });
  });

  const config = () => loadConfig(join(dir, 'config.yaml'), { env: { ...process.env, HOME: home } });
  const probeEnv = (extra: Record<string, string> = {}) =>
    agentEnv({
      HOME: home,
      OTHER_TASK_FILE: otherFile,
      RUNS_ROOT_FILE: join(root, 'root-secret.txt'),
      OUTSIDE_FILE: outside,
      ...extra,
    });

  it('hides the home, other tasks and the runs root; only the worktree, the task and run folders are writable', async () => {
    const task = taskId('probe');
    const result = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: task, prompt: 'probe', agent: 'probe', cwd: worktree, config: config(), env: probeEnv() });
    expect(result.error).toBeUndefined();
    const out = readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8').trim().split('\n');
    expect(out).toEqual([
      'DENIED ssh-key',
      'DENIED other-task',
      'DENIED runs-root',
      'DENIED write-outside',
      'ALLOWED write-worktree',
      'ALLOWED write-run-folder',
      'ALLOWED bus',
      'ALLOWED agent-config',
      'ALLOWED run-agent-bus',
    ]);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(worktree, 'made-in-worktree'))).toBe(true);
    expect(busMessages(new RunsLayout(root).taskBus(PROJECT, task)).map((m) => m.type)).toEqual(['RUN_START', 'PROGRESS', 'RUN_STOP']);
  });

  it('the same probe without a sandbox reads everything (the probe can tell)', async () => {
    const result = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: taskId('loose'), prompt: 'probe', agent: 'loose', cwd: worktree, config: config(), env: probeEnv() });
    const out = readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8');
    expect(out).toContain('ALLOWED ssh-key');
    expect(out).toContain('ALLOWED runs-root');
    expect(out).toContain('ALLOWED other-task');
    rmSync(outside, { force: true });
  });

  it('projects.<id>.sandbox: bwrap confines an agent that has no sandbox of its own', async () => {
    const cfgPath = join(dir, 'config-project.yaml');
    writeFileSync(cfgPath, `${readFileSync(join(dir, 'config.yaml'), 'utf8')}projects:\n  ${PROJECT}:\n    sandbox: bwrap\n`);
    const cfg = loadConfig(cfgPath, { env: { ...process.env, HOME: home } });
    const result = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: taskId('loose-project'), prompt: 'probe', agent: 'loose', cwd: worktree, config: cfg, env: probeEnv() });
    expect(result.error).toBeUndefined();
    const out = readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8');
    expect(out).toContain('DENIED ssh-key');
    expect(out).toContain('DENIED runs-root');
    expect(out).toContain('DENIED other-task');
    expect(existsSync(outside)).toBe(false);
  });

  it('the claude stream fake completes inside the sandbox with its usage recorded', async () => {
    const task = taskId('claude');
    const result = await runJob({ ...loopParts, root, projectId: PROJECT, taskId: task, prompt: 'hello', agent: 'claude', cwd: worktree, config: config(), env: agentEnv({ HOME: home }) });
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    expect(result.info?.status).toBe('completed');
    expect(result.info?.usage).toBeDefined();
  });

  it('stop still stops a sandboxed agent: the whole tree, exit 143, who stopped it', async () => {
    const task = taskId('stop');
    const running = runJob({ ...loopParts, root, projectId: PROJECT, taskId: task, prompt: 'wait', agent: 'sleeper', cwd: worktree, config: config(), env: agentEnv({ HOME: home, FAKE_AGENT_SLEEP_MS: '60000' }) });
    const runsDir = new RunsLayout(root).runsDir(PROJECT, task);
    const runDir = await waitFor(() => {
      try {
        const [run] = readdirSync(runsDir);
        return run && readRunInfo(join(runsDir, run, 'run-info.yaml')).pid > 0 ? join(runsDir, run) : undefined;
      } catch {
        return undefined;
      }
    });
    const pid = readRunInfo(join(runDir, 'run-info.yaml')).pid;
    await expect(stopRun(runDir, { graceMs: 5_000, stoppedBy: 'the test' })).resolves.toMatchObject({ stopped: true });
    const result = await running;
    expect(result.info).toMatchObject({ status: 'failed', exit_code: 143 });
    expect(result.info?.error_summary).toContain('the test');
    expect(isProcessRunning(pid)).toBe(false);
  });

  it('fails closed when bwrap is not on PATH: one clear line, the agent never starts', async () => {
    const nodeOnly = join(dir, 'node-only');
    mkdirSync(nodeOnly, { recursive: true });
    if (!existsSync(join(nodeOnly, 'node'))) symlinkSync(process.execPath, join(nodeOnly, 'node'));
    const marker = join(dir, 'unconfined-ran');
    const task = taskId('nobwrap');
    const result = await runJob({
      ...loopParts,
      root,
      projectId: PROJECT,
      taskId: task,
      prompt: 'probe',
      agent: 'probe',
      cwd: worktree,
      config: config(),
      env: { PATH: `${dirname(probe)}:${nodeOnly}`, HOME: home, OUTSIDE_FILE: marker },
    });
    expect(result.ok).toBe(false);
    expect(result.fatal).toBe(true);
    expect(result.error).toBe('sandbox bwrap unavailable: bwrap not found on PATH (install bubblewrap); the agent was not started (set sandbox: none to run it unconfined)');
    expect(existsSync(join(result.runDir, 'agent-stdout.txt')) ? readFileSync(join(result.runDir, 'agent-stdout.txt'), 'utf8') : '').toBe('');
    expect(existsSync(marker)).toBe(false);
    expect(result.info?.status).toBe('failed');
  });
});
