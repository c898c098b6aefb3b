import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunsLayout } from '@app/storage';
import { needsInputOf, NEEDS_INPUT_FILE, OpenQuestion } from './questions';

export interface TaskQuestions {
  project_id: string;
  task_id: string;
  questions: OpenQuestion[];
}

function dirs(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * Every task of the runs root (or of one project) in needs_input with its open questions. Only
 * tasks with the NEEDS-INPUT.json index file have their bus read.
 */
export function scanOpenQuestions(layout: RunsLayout, projectId?: string): TaskQuestions[] {
  const out: TaskQuestions[] = [];
  for (const p of projectId ? [projectId] : dirs(layout.root)) {
    for (const t of dirs(layout.projectDir(p))) {
      const taskDir = layout.taskDir(p, t);
      if (!existsSync(join(taskDir, NEEDS_INPUT_FILE))) continue;
      const questions = needsInputOf(taskDir, layout.taskBus(p, t));
      if (questions.length) out.push({ project_id: p, task_id: t, questions });
    }
  }
  return out;
}
