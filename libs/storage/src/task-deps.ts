import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_INFO_FILE, RUNS_DIR_NAME } from './layout';
import { readRunInfo } from './run-info';
import { StorageError } from './storage.errors';
import { hasDoneFile, readDependsOn, TASK_CONFIG_FILE, TASK_PROMPT_FILE } from './task-files';

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** `<root>/<p>/<t>` or the legacy `<root>/runs/<p>/<t>`. */
export function findTaskDir(root: string, projectId: string, taskId: string): string | undefined {
  return [join(root, projectId, taskId), join(root, RUNS_DIR_NAME, projectId, taskId)].find(isDir);
}

/**
 * A dependency is ready when its folder exists and it has DONE, or none of its runs is stored
 * as running and its greatest-named run with a readable run-info is completed (§6.1).
 */
export function isDependencyReady(root: string, projectId: string, depId: string): boolean {
  const taskDir = findTaskDir(root, projectId, depId);
  if (!taskDir) return false;
  if (hasDoneFile(taskDir)) return true;
  const runsDir = join(taskDir, RUNS_DIR_NAME);
  let names: string[];
  try {
    names = readdirSync(runsDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return false;
  }
  let latest = '';
  let latestStatus = '';
  for (const name of names) {
    let status: string;
    try {
      status = readRunInfo(join(runsDir, name, RUN_INFO_FILE)).status;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NOT_FOUND') continue;
      if (!(err instanceof StorageError && err.code === 'CORRUPT')) throw err;
      status = 'corrupt'; // one bad record is that record's problem: a corrupt latest run is not `completed`
    }
    if (status === 'running') return false;
    if (name > latest) {
      latest = name;
      latestStatus = status;
    }
  }
  return latest !== '' && latestStatus === 'completed';
}

/** The dependencies of a task that are not ready yet, in order. */
export function blockedBy(root: string, projectId: string, dependsOn: string[]): string[] {
  return dependsOn.filter((dep) => !isDependencyReady(root, projectId, dep));
}

/** Throws StorageError('CONFLICT', 'dependency cycle detected: a -> b -> a') when one would arise. */
export function validateNoDependencyCycle(root: string, projectId: string, taskId: string, dependsOn: string[]): void {
  // a task without dependencies closes no cycle: skip reading every task of the project (task start-up, #15)
  if (dependsOn.length === 0) return;
  const graph = new Map<string, string[]>();
  const projectDir = [join(root, projectId), join(root, RUNS_DIR_NAME, projectId)].find(isDir);
  if (projectDir) {
    for (const entry of readdirSync(projectDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = join(projectDir, entry.name);
      if (!isFile(join(dir, TASK_PROMPT_FILE)) && !isFile(join(dir, TASK_CONFIG_FILE))) continue;
      graph.set(entry.name, readDependsOn(dir));
    }
  }
  graph.set(taskId, dependsOn);
  const nodes = new Set<string>();
  for (const [node, deps] of graph) {
    nodes.add(node);
    deps.forEach((d) => nodes.add(d));
  }
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  let cycle: string[] = [];
  const visit = (node: string): boolean => {
    state.set(node, 1);
    stack.push(node);
    for (const dep of graph.get(node) ?? []) {
      const s = state.get(dep);
      if (s === undefined) {
        if (visit(dep)) return true;
      } else if (s === 1) {
        cycle = [...stack.slice(stack.indexOf(dep)), dep];
        return true;
      }
    }
    stack.pop();
    state.set(node, 2);
    return false;
  };
  for (const node of [...nodes].sort()) {
    if (state.get(node) === undefined && visit(node)) {
      throw new StorageError('CONFLICT', `dependency cycle detected: ${cycle.join(' -> ')}`);
    }
  }
}
