import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCompletionTree, shortDescription, type CommandLike } from '../../../apps/cli/src/commands/completion/completion-tree';
import { bashScript, fishScript, zshScript } from '../../../apps/cli/src/commands/completion/completion-scripts';

type Spec = { name: string; description?: string; options?: string[][]; commands?: Spec[] };

/** A command tree with the shape of commander's public API (what the completion walk reads). */
function tree(spec: Spec, parent: CommandLike | null = null): CommandLike {
  const commands: CommandLike[] = [];
  const node: CommandLike = {
    name: () => spec.name,
    description: () => spec.description ?? '',
    commands,
    parent,
    createHelp: () => ({
      visibleCommands: (cmd) => [...cmd.commands],
      visibleOptions: () => [...(spec.options ?? []), ['--help', '-h']].map(([long, short]) => ({ long, short, description: `${long} flag` })),
    }),
  };
  commands.push(...(spec.commands ?? []).map((c) => tree(c, node)));
  return node;
}

const program = tree({
  name: 'run-agent',
  commands: [
    { name: 'bus', description: 'Read and post messages. Second sentence.', commands: [{ name: 'post', options: [['--project'], ['--body']] }, { name: 'read' }] },
    { name: 'bench-it', description: 'Builds' },
    { name: 'server', commands: [{ name: 'status', options: [['--server']] }] },
  ],
});

let dir: string;
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'completion-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the bash completion function for `words` (the last one is being completed) in a real bash. */
function completeBash(script: string, fn: string, words: string[]): string[] {
  const file = join(dir, `${fn}.bash`);
  writeFileSync(file, script);
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; ${fn}; printf '%s\\n' "\${COMPREPLY[@]}"`], {
    encoding: 'utf8',
  });
  return out.split('\n').filter(Boolean);
}

describe('completion tree', () => {
  it('lists every command path with its subcommands and options, and adds --version to the program', () => {
    const t = buildCompletionTree(program, 'run-agent');
    expect(t.nodes.map((n) => n.path)).toEqual(['', 'bench-it', 'bus', 'bus post', 'bus read', 'server', 'server status']);
    const root = t.nodes[0];
    expect(root.subcommands.map((s) => s.name)).toEqual(['bus', 'bench-it', 'server']);
    expect(root.options.flatMap((o) => o.flags)).toEqual(['--help', '-h', '--version', '-v']);
    expect(t.nodes.find((n) => n.path === 'bus post')?.options.flatMap((o) => o.flags)).toEqual(['--project', '--body', '--help', '-h']);
    expect(root.subcommands[0].description).toBe('Read and post messages');
  });

  it('remaps first words onto nested commands (conductor status → server status)', () => {
    const t = buildCompletionTree(program, 'conductor', [{ from: 'status', to: 'server status' }, { from: 'bus', to: 'server missing' }]);
    expect(t.nodes.find((n) => n.path === 'status')?.options.flatMap((o) => o.flags)).toContain('--server');
    expect(t.nodes[0].subcommands.map((s) => s.name)).toContain('status');
    // a remap whose target does not exist leaves the original subtree alone
    expect(t.nodes.find((n) => n.path === 'bus post')?.options.flatMap((o) => o.flags)).toContain('--body');
  });

  it('shortens descriptions to their first sentence and at most 80 characters', () => {
    expect(shortDescription('Stop a run: SIGTERM to its group. Then SIGKILL.')).toBe('Stop a run: SIGTERM to its group');
    expect(shortDescription('Print a script, e.g. `x`; more')).toBe('Print a script, e.g. `x`');
    const long = shortDescription('word '.repeat(40));
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long.endsWith('...')).toBe(true);
  });
});

describe('bash script', () => {
  const script = bashScript(buildCompletionTree(program, 'run-agent'));

  it('completes `run-agent bu` to `bus` (and not bench-it, which starts with b)', () => {
    expect(completeBash(script, '_run_agent_complete', ['run-agent', 'bu'])).toEqual(['bus']);
  });

  it('completes subcommands after flags and their values, and flags of the current command', () => {
    expect(completeBash(script, '_run_agent_complete', ['run-agent', 'bus', 'p'])).toEqual(['post']);
    expect(completeBash(script, '_run_agent_complete', ['run-agent', 'bus', 'post', '--project', 'demo', '--b'])).toEqual(['--body']);
    expect(completeBash(script, '_run_agent_complete', ['run-agent', 'b'])).toEqual(['bus', 'bench-it']);
  });

  it('offers nothing from the command list once a leaf command is reached', () => {
    expect(completeBash(script, '_run_agent_complete', ['run-agent', 'bus', 'read', 'bu'])).toEqual([]);
  });
});

describe('zsh and fish scripts', () => {
  it('zsh: registers the function with compdef and carries descriptions', () => {
    const script = zshScript(buildCompletionTree(program, 'run-agent'));
    expect(script.startsWith('#compdef run-agent\n')).toBe(true);
    expect(script).toContain("'bus:Read and post messages'");
    expect(script).toContain('compdef _run_agent run-agent');
    expect(script).toMatch(/'bus post'\) reply_subs=\(\); reply_opts=\('--project' '--body' '--help' '-h'\)/);
  });

  it('fish: one complete line per subcommand and option, scoped by command path', () => {
    const script = fishScript(buildCompletionTree(program, 'run-agent'));
    expect(script).toContain("complete -c run-agent -n '__run_agent_at \\'bus\\'' -f -a 'post'");
    expect(script).toContain("complete -c run-agent -n '__run_agent_at \\'bus post\\'' -l project");
    expect(script).toContain("complete -c run-agent -n '__run_agent_at \\'\\'' -l version -s v");
  });

  it('the bash script is valid bash syntax', () => {
    const file = join(dir, 'syntax.bash');
    writeFileSync(file, bashScript(buildCompletionTree(program, 'conductor')));
    expect(() => execFileSync('bash', ['-n', file])).not.toThrow();
  });
});
