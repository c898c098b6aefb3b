import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { constants as osConstants } from 'node:os';
import { errorSummaryForExit, jrunVariables, prependPathDir, runAgentBinDir } from '@app/agents';
import type { BusWriters } from '@app/messagebus';
import {
  isProjectHome,
  newRunInfo,
  runFilePaths,
  runInfoFile,
  type RunsLayout,
  scopeFromRunFolder,
  scopeFromRunInfoUpwards,
  scopeFromTaskFolder,
  updateRunInfo,
  writeRunInfo,
  writeTaskPromptIfAbsent,
} from '@app/storage';

/*
 * The `run-agent wrap` use case: run an agent CLI with the terminal attached and record it as a run
 * (run folder, run-info.yaml, RUN_START / RUN_STOP or RUN_CRASH). The command validates the flags.
 */

export const WRAP_STDIO_NOTICE = 'run-agent wrap used terminal passthrough stdio to preserve CLI behavior; console transcript was not captured.\n';
const KNOWN_AGENT_CLIS = new Set(['claude', 'codex', 'gemini']);

/** Each word quoted (JSON/Go style) only when it holds whitespace, quotes, backslash, backtick or `$`. */
export function renderCommandLine(command: string, args: string[]): string {
  const quote = (w: string): string => (w === '' ? '""' : /[\s"'`\\$]/.test(w) ? JSON.stringify(w) : w);
  return [command.trim(), ...args].map(quote).join(' ').trim();
}

/** D7 for wrap: --project, then JRUN_RUN_FOLDER, JRUN_TASK_FOLDER, JRUN_PROJECT_ID, the cwd's run-info, a project home. */
export function wrapProject(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  return (
    flag?.trim() ||
    scopeFromRunFolder(env.JRUN_RUN_FOLDER)?.project ||
    scopeFromTaskFolder(env.JRUN_TASK_FOLDER)?.project ||
    env.JRUN_PROJECT_ID?.trim() ||
    scopeFromRunInfoUpwards(cwd)?.project ||
    (isProjectHome(cwd) ? basename(resolve(cwd)) : undefined)
  );
}

/** `<cli> --version` for the known agent CLIs only: other wrapped commands are not probed. */
function detectVersion(agent: string): string {
  if (!KNOWN_AGENT_CLIS.has(agent)) return '';
  const r = spawnSync(agent, ['--version'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) return '';
  return (r.stdout?.trim() || r.stderr?.trim() || '').trim();
}

/** The process group of a live process (Linux /proc), falling back to the pid itself. */
function processGroupOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgid = Number(fields[2]);
    return Number.isInteger(pgid) && pgid > 0 ? pgid : pid;
  } catch {
    return pid;
  }
}

function tailLines(path: string, n: number): string {
  try {
    const lines = readFileSync(path, 'utf8').replace(/\n$/, '').split('\n');
    return lines.slice(-n).join('\n').trim();
  } catch {
    return '';
  }
}

function spawnChild(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<ChildProcess> {
  return new Promise((resolveSpawn, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: 'inherit' });
    child.once('spawn', () => resolveSpawn(child));
    child.once('error', reject);
  });
}

function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) resolveExit({ code: child.exitCode, signal: child.signalCode });
    else child.once('close', (code, signal) => resolveExit({ code, signal }));
  });
}

/** The wrapped command's working directory must exist. */
export function checkWorkingDir(cwd: string): void {
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new Error(`working directory not found: ${cwd}`);
}

export interface WrapRunOptions {
  /** The runs root's layout and the bus-writer factory (of the composition root). */
  layout: RunsLayout;
  writers: BusWriters;
  /** Validated project and task ids. */
  project: string;
  task: string;
  /** The executable as given and its arguments. */
  agent: string;
  args: string[];
  /** Existing working directory (absolute). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Validated run ids, or ''/undefined. */
  parentRunId: string;
  previousRunId?: string;
  /** 0 = no timeout. */
  timeoutMs: number;
  taskPrompt?: string;
}

export interface WrapRunResult {
  runId: string;
  runDir: string;
  /** The wrapped command's exit code (128+signal when killed; 127/126/1 when it could not start). */
  exitCode: number;
  timedOut: boolean;
  /** Set when the command could not be started. */
  startError?: string;
}

export async function runWrapped(opts: WrapRunOptions): Promise<WrapRunResult> {
  const { agent, args, cwd, env, project, task, parentRunId, timeoutMs } = opts;
  const { layout } = opts;
  const taskDir = layout.taskDir(project, task);
  mkdirSync(taskDir, { recursive: true, mode: 0o755 });

  const agentLabel = agent.toLowerCase();
  const commandLine = renderCommandLine(agent, args);
  writeTaskPromptIfAbsent(
    taskDir,
    opts.taskPrompt?.trim() || `Wrapped CLI invocation.\n\nagent: ${agentLabel}\ncommand: ${renderCommandLine(agentLabel, args)}\ncwd: ${cwd}`,
  );
  const { runId, dir: runDir } = layout.allocateRunDir(project, task);
  const files = runFilePaths(runDir);
  const paths = { prompt: files.prompt_path, stdout: files.stdout_path, stderr: files.stderr_path, output: files.output_path, info: runInfoFile(runDir) };
  writeFileSync(paths.prompt, `# Wrapped Invocation\n\ncommand: ${commandLine}\ncwd: ${cwd}\n\n${WRAP_STDIO_NOTICE.trim()}\n`);
  writeFileSync(paths.stdout, WRAP_STDIO_NOTICE);
  writeFileSync(paths.stderr, WRAP_STDIO_NOTICE);

  const info = newRunInfo({
    run_id: runId,
    parent_run_id: parentRunId || undefined,
    previous_run_id: opts.previousRunId?.trim() || undefined,
    project_id: project,
    task_id: task,
    agent: agentLabel,
    process_ownership: 'managed',
    cwd,
    prompt_path: paths.prompt,
    output_path: paths.output,
    stdout_path: paths.stdout,
    stderr_path: paths.stderr,
    commandline: commandLine,
    agent_version: detectVersion(agentLabel),
  });
  const bus = opts.writers(layout.taskBus(project, task));
  const post = (type: string, body: string) => bus.append({ type, project_id: project, task_id: task, run_id: runId, body });

  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  Object.assign(
    childEnv,
    jrunVariables({
      projectId: project,
      taskId: task,
      runId,
      parentRunId,
      runsDir: layout.runsDir(project, task),
      messageBus: layout.taskBus(project, task),
      taskFolder: taskDir,
      runFolder: runDir,
    }),
  );
  // '' makes runAgentBinDir locate the package's bin/ (argv[1] is the program name here).
  const binDir = runAgentBinDir('');
  if (binDir) childEnv.PATH = prependPathDir(childEnv.PATH ?? '', binDir);

  let child: ChildProcess;
  try {
    child = await spawnChild(agent, args, cwd, childEnv);
  } catch (err) {
    const message = (err as Error).message;
    writeRunInfo(paths.info, {
      ...info,
      pid: process.pid,
      pgid: processGroupOf(process.pid),
      end_time: new Date(),
      status: 'failed',
      error_summary: message.slice(0, 200),
    });
    await post('RUN_CRASH', `run failed to start\nrun_dir: ${runDir}\nerror: ${message}`);
    if (!existsSync(paths.output)) copyFileSync(paths.stdout, paths.output);
    const code = (err as NodeJS.ErrnoException).code;
    return { runId, runDir, exitCode: code === 'ENOENT' ? 127 : code === 'EACCES' ? 126 : 1, timedOut: false, startError: message };
  }

  const pid = child.pid as number;
  writeRunInfo(paths.info, { ...info, pid, pgid: processGroupOf(pid) });
  // The child shares our terminal and process group: Ctrl-C reaches it directly. Signals sent to
  // this process alone are passed on, and keep this process alive to record the outcome.
  const forward = (signal: NodeJS.Signals) => () => {
    if (signal !== 'SIGINT') child.kill(signal);
  };
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as NodeJS.Signals[]).map((s) => [s, forward(s)] as const);
  handlers.forEach(([s, h]) => process.on(s, h));
  let timedOut = false;
  const timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), child.kill('SIGKILL')), timeoutMs) : undefined;
  try {
    await post(
      'RUN_START',
      `run started\nrun_dir: ${runDir}\nprompt: ${paths.prompt}\nstdout: ${paths.stdout}\nstderr: ${paths.stderr}\noutput: ${paths.output}`,
    );
  } catch (err) {
    child.kill('SIGKILL');
    await waitForExit(child);
    throw err;
  }
  const { code, signal } = await waitForExit(child);
  if (timer) clearTimeout(timer);

  const exitCode = signal ? 128 + (osConstants.signals[signal] ?? 0) : (code ?? 1);
  const status = exitCode === 0 ? 'completed' : 'failed';
  const errorSummary = status === 'completed' ? undefined : timedOut ? 'timed out' : signal ? `agent killed by ${signal}` : errorSummaryForExit(exitCode);
  await updateRunInfo(paths.info, (current) => ({
    ...current,
    exit_code: exitCode,
    end_time: new Date(),
    status,
    error_summary: errorSummary ?? current.error_summary,
  }));
  if (!existsSync(paths.output)) copyFileSync(paths.stdout, paths.output);
  let body = `run stopped with code ${exitCode}\nrun_dir: ${runDir}\noutput: ${paths.output}`;
  if (status === 'failed') {
    const excerpt = tailLines(paths.stderr, 50);
    if (excerpt) body += `\n\n## stderr (last 50 lines)\n${excerpt}`;
  }
  await post(status === 'failed' ? 'RUN_CRASH' : 'RUN_STOP', body);
  bus.close();
  return { runId, runDir, exitCode, timedOut };
}
