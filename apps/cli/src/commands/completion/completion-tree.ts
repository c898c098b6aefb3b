// Plain module (no NestJS): turns the registered commander tree into data the script renderers use.

/** One command of the tree, addressed by its path of words from the program ("" = the program). */
export interface CompletionNode {
  path: string;
  subcommands: { name: string; description: string }[];
  options: { flags: string[]; description: string }[];
}

export interface CompletionTree {
  program: string;
  nodes: CompletionNode[];
}

/** The part of commander's public API that the walk needs (nest-commander bundles its own commander). */
export interface CommandLike {
  name(): string;
  description(): string;
  commands: readonly CommandLike[];
  parent: CommandLike | null;
  createHelp(): {
    visibleCommands(cmd: CommandLike): CommandLike[];
    visibleOptions(cmd: CommandLike): { long?: string; short?: string; description: string }[];
  };
}

export function rootOf(command: CommandLike): CommandLike {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

const MAX_DESCRIPTION = 80;

/** The first sentence of a help text, short enough for a completion menu. */
export function shortDescription(text: string): string {
  const line = (text ?? '').split('\n')[0].trim();
  const sentence = /^(.+?[^.\s]{3}[.;])\s/.exec(`${line} `)?.[1].replace(/[.;]$/, '') ?? line;
  return sentence.length > MAX_DESCRIPTION ? `${sentence.slice(0, MAX_DESCRIPTION - 3).trimEnd()}...` : sentence;
}

function describe(cmd: CommandLike, path: string): CompletionNode {
  const help = cmd.createHelp();
  return {
    path,
    subcommands: help.visibleCommands(cmd).map((c) => ({ name: c.name(), description: shortDescription(c.description()) })),
    options: help.visibleOptions(cmd).map((o) => ({
      flags: [o.long, o.short].filter((f): f is string => !!f),
      description: shortDescription(o.description),
    })),
  };
}

function walk(cmd: CommandLike, path: string, out: CompletionNode[]): void {
  out.push(describe(cmd, path));
  for (const sub of cmd.commands) walk(sub, path ? `${path} ${sub.name()}` : sub.name(), out);
}

/**
 * The completion tree of `program`. `remap` lists first words that the program answers with a
 * nested command instead (conductor: `conductor status` runs `server status`), so their subtree
 * is taken from there.
 */
export function buildCompletionTree(root: CommandLike, program: string, remap: { from: string; to: string }[] = []): CompletionTree {
  const nodes: CompletionNode[] = [];
  walk(root, '', nodes);
  const byPath = new Map(nodes.map((n) => [n.path, n]));
  const rootNode = nodes[0];
  if (!rootNode.options.some((o) => o.flags.includes('--version'))) {
    // `--version` is answered by the fast path (apps/cli/src/fast-path.ts), not by commander.
    rootNode.options.push({ flags: ['--version', '-v'], description: 'print the version' });
  }
  for (const { from, to } of remap) {
    const target = byPath.get(to);
    if (!target) continue;
    const kept = nodes.filter((n) => n.path !== from && !n.path.startsWith(`${from} `));
    const copies = nodes
      .filter((n) => n.path === to || n.path.startsWith(`${to} `))
      .map((n) => ({ ...n, path: from + n.path.slice(to.length) }));
    nodes.splice(0, nodes.length, ...kept, ...copies);
    const entry = rootNode.subcommands.find((s) => s.name === from);
    const description = byPath.get(to.split(' ')[0])?.subcommands.find((s) => s.name === to.split(' ').pop())?.description ?? '';
    if (entry) entry.description = description || entry.description;
    else rootNode.subcommands.push({ name: from, description });
  }
  nodes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { program, nodes };
}
