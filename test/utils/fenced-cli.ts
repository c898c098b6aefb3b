import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OWNER_EPOCH_FILE, RUNS_DIR_NAME } from '@app/storage';

/** How a spawned CLI ended: its exit code and everything it wrote to stderr. */
export interface CliOutcome {
  code: number | null;
  stderr: string;
}

/** Every byte written for a task: its bus, each run's files, the owner-epoch record (a fenced runner changes none). */
export function taskBytes(taskDir: string, bus: string): Record<string, string> {
  const out: Record<string, string> = { bus: readFileSync(bus, 'utf8'), epoch: readFileSync(join(taskDir, OWNER_EPOCH_FILE), 'utf8') };
  const runs = join(taskDir, RUNS_DIR_NAME);
  for (const run of readdirSync(runs)) {
    for (const file of readdirSync(join(runs, run))) out[`${run}/${file}`] = readFileSync(join(runs, run, file), 'utf8');
  }
  return out;
}

/** The lines of a counter file an agent appends to at each start (none when absent). */
export function countedStarts(counter: string): string[] {
  return existsSync(counter) ? readFileSync(counter, 'utf8').trim().split('\n') : [];
}

export interface CliSpawnerOptions {
  /** The built `bin/run-agent`. */
  runAgent: string;
  cwd: string;
  env(extra: Record<string, string>): NodeJS.ProcessEnv;
  /** Arguments after each call's own (root, project, agent, config, …). */
  trailing: string[];
  /** Spawned children are pushed here (the sandbox kills what is left). */
  children: ChildProcess[];
}

/** Spawns the built CLI (`build first`): stdout ignored, stderr collected into the outcome. */
export function cliSpawner(o: CliSpawnerOptions): (args: string[], env: Record<string, string>) => { child: ChildProcess; done: Promise<CliOutcome> } {
  return (args, env) => {
    const child = spawn(process.execPath, [o.runAgent, ...args, ...o.trailing], { env: o.env(env), cwd: o.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    o.children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const done = new Promise<CliOutcome>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
    return { child, done };
  };
}
