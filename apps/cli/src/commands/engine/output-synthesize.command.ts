import { isAbsolute, join } from 'node:path';
import { Inject } from '@nestjs/common';
import { CommandRunner, Option, SubCommand } from 'nest-commander';
import { readUserFile, type RunsLayout, STORAGE_INDEX_FACTORY, type StorageIndexFactory, writeUserFile, RUN_OUTPUT_FILE, RUN_STDOUT_FILE } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { resolveRoot } from './support/runs-root';
import { inferScope } from './support/scope';

interface SynthesizeOptions {
  root?: string;
  project?: string;
  task?: string;
  runs?: string;
  out?: string;
  strict?: boolean;
}

/** output.md of a run, else agent-stdout.txt. */
function readRunOutput(runDir: string): { content: string; source: string } | undefined {
  for (const name of [RUN_OUTPUT_FILE, RUN_STDOUT_FILE]) {
    const source = join(runDir, name);
    try {
      return { content: readUserFile(source), source };
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

/** One markdown document from the outputs of several runs (cli-storage.md §1.13). */
export function synthesize(selectors: { label: string; dir: string }[], strict: boolean): string {
  let out = '';
  let missing = 0;
  for (const { label, dir } of selectors) {
    const found = readRunOutput(dir);
    if (!found) {
      if (strict) throw new Error(`run ${label}: no output.md or agent-stdout.txt found in ${dir}`);
      out += `## run: ${label}\n\n> WARNING: no output found for this run (path: ${dir})\n\n`;
      missing++;
      continue;
    }
    out += `## run: ${label}\n\nsource: ${found.source}\n\n${found.content.trim()}\n\n---\n\n`;
  }
  if (missing > 0) out += `> ${missing} run(s) had no output artifact\n`;
  return out;
}

@SubCommand({
  name: 'synthesize',
  description: 'Concatenate the outputs (output.md, else agent-stdout.txt) of several runs into one markdown document',
})
export class OutputSynthesizeCommand extends CommandRunner {
  constructor(@Inject(STORAGE_INDEX_FACTORY) private readonly indexFor: StorageIndexFactory) {
    super();
  }

  async run(params: string[], own: SynthesizeOptions = {}): Promise<void> {
    // Commander lets the parent `output` claim --root/--project/--task written after
    // `synthesize`, so they are read from there too.
    const inherited = (this.command?.parent?.opts() ?? {}) as SynthesizeOptions;
    const options: SynthesizeOptions = { ...own, root: own.root ?? inherited.root, project: own.project ?? inherited.project, task: own.task ?? inherited.task };
    if (params.length) throw new UsageError(`unexpected argument ${JSON.stringify(params[0])}`);
    const selectors = (options.runs ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    if (selectors.length === 0) throw new UsageError('--runs is required (comma-separated run IDs or absolute paths)');

    let layout: RunsLayout | undefined;
    let scope: { project?: string; task?: string } = {};
    if (!selectors.every((s) => isAbsolute(s))) {
      const root = resolveRoot(options.root);
      scope = inferScope({ project: options.project, task: options.task }, { root });
      layout = this.indexFor(root).layout;
    }
    // Run ids are checked (D18) before any file is read or written.
    const resolved = selectors.map((label) => {
      if (isAbsolute(label)) return { label, dir: label };
      if (layout && scope.project && scope.task) return { label, dir: layout.runDir(scope.project, scope.task, label) };
      return { label, dir: label };
    });
    const text = synthesize(resolved, !!options.strict);
    if (options.out?.trim()) writeUserFile(options.out.trim(), text);
    else process.stdout.write(text);
  }

  @Option({ flags: '--root <dir>', description: 'runs root used to resolve run ids (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--project <id>', description: 'project of the run ids (default: inferred from JRUN_* variables or the working directory)' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--task <id>', description: 'task of the run ids (default: inferred from JRUN_* variables or the working directory)' })
  parseTask(v: string): string {
    return v;
  }

  @Option({ flags: '--runs <list>', description: 'comma-separated run ids (resolved under the task) or absolute run folder paths (required)' })
  parseRuns(v: string): string {
    return v;
  }

  @Option({ flags: '--out <file>', description: 'write the document to this file instead of stdout' })
  parseOut(v: string): string {
    return v;
  }

  @Option({ flags: '--strict', description: 'fail when a run has no output artifact (default: note it and continue)' })
  parseStrict(): boolean {
    return true;
  }
}
