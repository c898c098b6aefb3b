import { resolve } from 'node:path';
import { Command, CommandRunner, Option, SubCommand } from 'nest-commander';
import { findSourceProjectRoot, HOME_FOLDERS_FILE, initProjectHome, validateProjectId } from '@app/storage';
import { UsageError } from '../../common/cli-errors';
import { checkDir, withParentOptions } from '../engine/job-common';
import { resolveRoot } from '../engine/support/runs-root';
import { promptProjectInit } from './project-scope';

interface ProjectInitFlags {
  project?: string;
  dir?: string;
  root?: string;
  json?: boolean;
}

@SubCommand({
  name: 'init',
  description:
    `Link a source folder to a project: creates <root>/<project>/ with ${HOME_FOLDERS_FILE} (project_root: <folder>) and an ` +
    'empty PROJECT-MESSAGE-BUS.md. Commands run inside that folder then infer the project. Without --project it asks ' +
    'for the id on a terminal (suggesting the folder name).',
})
export class ProjectInitCommand extends CommandRunner {
  async run(_args: string[], options: ProjectInitFlags = {}): Promise<void> {
    const flags = withParentOptions(this.command, options);
    const root = resolveRoot(flags.root);
    const sourceRoot = flags.dir ? checkDir(flags.dir, 'folder')! : findSourceProjectRoot(process.cwd());
    let projectId = flags.project?.trim();
    let projectDir: string;
    if (projectId) {
      validateProjectId(projectId);
      projectDir = initProjectHome(root, projectId, sourceRoot);
    } else {
      if (process.stdin.isTTY !== true) throw new UsageError('--project is required when no terminal is attached');
      projectId = await promptProjectInit(root, sourceRoot);
      projectDir = resolve(root, projectId);
    }
    if (flags.json) process.stdout.write(`${JSON.stringify({ project_id: projectId, project_dir: projectDir, project_root: sourceRoot }, null, 2)}\n`);
    else process.stdout.write(`project ${projectId}: ${projectDir} (project_root: ${sourceRoot})\n`);
  }

  @Option({ flags: '--project <id>', description: 'project id (lowercase letters, digits, hyphens); asked for on a terminal when omitted' })
  parseProject(v: string): string {
    return v;
  }

  @Option({ flags: '--dir <folder>', description: 'source folder to link (default: the project root above the working directory: .git, package.json, go.mod, …)' })
  parseDir(v: string): string {
    return v;
  }

  @Option({ flags: '--root <dir>', description: 'runs root (default: $CONDUCTOR_ROOT, $RUN_AGENT_ROOT, config storage.runs_dir, ~/.run-agent/runs)' })
  parseRoot(v: string): string {
    return v;
  }

  @Option({ flags: '--json', description: 'print the result as JSON' })
  parseJson(): boolean {
    return true;
  }
}

@Command({ name: 'project', description: 'Project homes: link source folders to projects (init)', subCommands: [ProjectInitCommand] })
export class ProjectCommand extends CommandRunner {
  async run(): Promise<void> {
    this.command.outputHelp();
  }
}
