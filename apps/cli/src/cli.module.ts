/* eslint-disable @typescript-eslint/no-require-imports -- each command group is required only when argv names it */
import { Module, type Provider, type Type } from '@nestjs/common';

/**
 * The CLI's commands in per-group modules, loaded lazily: a command line that names a known
 * top-level command boots a module with that group's commands only, so `bus read` never loads
 * the server client, the orchestration commands or the API (docs/decisions.md, "CLI start-up").
 * Root help, completion and any command not listed here boot the whole tree (CliModule).
 */
const engine = (file: string): Record<string, Provider> => require(`./commands/engine/${file}`);

const GROUPS = {
  bus: (): Provider[] => require('./commands/bus').busCommands,
  inspect: (): Provider[] => require('./commands/inspect').inspectCommands,
  engine: (): Provider[] => require('./commands/engine').engineCommands,
  // the engine's hot commands load only their own files (agents call them constantly)
  job: (): Provider[] => [engine('job.command').JobCommand, engine('job-batch.command').JobBatchCommand],
  task: (): Provider[] => [
    engine('task.command').TaskCommand,
    engine('task-resume.command').TaskResumeCommand,
    engine('task-delete.command').TaskDeleteCommand,
    engine('task-cancel.command').TaskCancelCommand,
  ],
  status: (): Provider[] => [engine('status.command').StatusCommand],
  // `server monitor` is a subcommand of the server group owned by the orchestration work
  server: (): Provider[] => [...require('./commands/server').serverCommands, require('./commands/orchestration/server-monitor.command').ServerMonitorCommand],
  orchestration: (): Provider[] => [...require('./commands/orchestration').orchestrationCommands],
  needsInput: (): Provider[] => require('./commands/needs-input').needsInputCommands,
  completion: (): Provider[] => require('./commands/completion').completionCommands,
  mcp: (): Provider[] => require('./commands/mcp').mcpCommands,
  scaleout: (): Provider[] => require('./commands/scaleout').scaleoutCommands,
  usage: (): Provider[] => require('./commands/usage').usageCommands,
  triggers: (): Provider[] => require('./commands/triggers').triggerCommands,
} satisfies Record<string, () => Provider[]>;

export type CommandGroup = keyof typeof GROUPS;

/** Top-level command → the group whose module defines it and everything below it. */
export const GROUP_OF_COMMAND: Readonly<Record<string, CommandGroup>> = {
  bus: 'bus',
  list: 'inspect',
  validate: 'inspect',
  job: 'job',
  task: 'task',
  stop: 'engine',
  resume: 'engine',
  status: 'status',
  watch: 'engine',
  output: 'engine',
  gc: 'engine',
  wrap: 'engine',
  'shell-setup': 'engine',
  diff: 'engine',
  merge: 'engine',
  'approve-setup': 'engine',
  serve: 'server',
  server: 'server',
  goal: 'orchestration',
  review: 'orchestration',
  facts: 'orchestration',
  project: 'orchestration',
  iterate: 'orchestration',
  workflow: 'orchestration',
  monitor: 'orchestration',
  ask: 'needsInput',
  answer: 'needsInput',
  mcp: 'mcp',
  worker: 'scaleout',
  usage: 'usage',
  pause: 'usage',
  unpause: 'usage',
  schedule: 'triggers',
  trigger: 'triggers',
};

function moduleOf(name: string, providers: Provider[]): Type {
  const mod = class {};
  Object.defineProperty(mod, 'name', { value: name });
  // every group's module imports the same lib modules (the DI seams; cli-lib-modules.ts)
  Module({ imports: require('./cli-lib-modules').cliLibModules(), providers })(mod);
  return mod;
}

/** Every command (root help, `completion`, the docs generator). */
export function fullCliModule(): Type {
  const all = new Set<Provider>();
  // this order is the order of `--help` (docs/cli-reference.md)
  const order: CommandGroup[] = ['bus', 'inspect', 'engine', 'server', 'completion', 'orchestration', 'needsInput', 'mcp', 'scaleout', 'usage', 'triggers'];
  for (const group of order) for (const p of GROUPS[group]()) all.add(p);
  return moduleOf('CliModule', [...all]);
}

/** The module that can run `argv` (already mapped for `conductor`): one group's, or the full tree. */
export function cliModuleFor(argv: readonly string[]): Type {
  const first = argv[0];
  const group = first !== undefined && Object.hasOwn(GROUP_OF_COMMAND, first) ? GROUP_OF_COMMAND[first] : undefined;
  if (!group) return fullCliModule();
  return moduleOf(`Cli${group[0].toUpperCase()}${group.slice(1)}Module`, GROUPS[group]());
}
