// Plain module: renders shell completion scripts from a CompletionTree (completion-tree.ts).
import type { CompletionNode, CompletionTree } from './completion-tree';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** POSIX single quoting (bash, zsh). */
function sq(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** fish single quoting: backslash and quote are escaped inside the quotes. */
function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A shell identifier derived from the program name: run-agent → run_agent. */
export function functionStem(program: string): string {
  return program.replace(/[^A-Za-z0-9]/g, '_');
}

const optionWords = (node: CompletionNode): string[] => node.options.flatMap((o) => o.flags);

function header(tree: CompletionTree, shell: Shell, install: string): string[] {
  return [
    `# ${shell} completion for ${tree.program}, generated from its command tree by \`${tree.program} completion ${shell}\`.`,
    `# Install: ${install}`,
  ];
}

export function bashScript(tree: CompletionTree): string {
  const stem = functionStem(tree.program);
  const cases = tree.nodes.map(
    (n) => `    ${sq(n.path)}) __${stem}_subs=${sq(n.subcommands.map((s) => s.name).join(' '))}; __${stem}_opts=${sq(optionWords(n).join(' '))} ;;`,
  );
  return [
    ...header(tree, 'bash', `source <(${tree.program} completion bash)   # e.g. in ~/.bashrc`),
    `__${stem}_node() {`,
    '  case "$1" in',
    ...cases,
    '    *) return 1 ;;',
    '  esac',
    '}',
    '',
    `_${stem}_complete() {`,
    `  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath='' candidate i __${stem}_subs='' __${stem}_opts=''`,
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    [[ "${COMP_WORDS[i]}" == -* ]] && continue',
    '    candidate="${cmdpath:+$cmdpath }${COMP_WORDS[i]}"',
    `    __${stem}_node "$candidate" && cmdpath="$candidate"`,
    '  done',
    `  __${stem}_node "$cmdpath"`,
    '  if [[ "$cur" == -* ]]; then',
    `    mapfile -t COMPREPLY < <(compgen -W "$__${stem}_opts" -- "$cur")`,
    `  elif [[ -n "$__${stem}_subs" ]]; then`,
    `    mapfile -t COMPREPLY < <(compgen -W "$__${stem}_subs" -- "$cur")`,
    '  else',
    '    COMPREPLY=()',
    '  fi',
    '}',
    `complete -o default -F _${stem}_complete ${tree.program}`,
    '',
  ].join('\n');
}

export function zshScript(tree: CompletionTree): string {
  const stem = functionStem(tree.program);
  const cases = tree.nodes.map((n) => {
    const subs = n.subcommands.map((s) => sq(`${s.name}:${s.description}`)).join(' ');
    const opts = optionWords(n).map(sq).join(' ');
    return `    ${sq(n.path)}) reply_subs=(${subs}); reply_opts=(${opts}) ;;`;
  });
  return [
    `#compdef ${tree.program}`,
    ...header(tree, 'zsh', `source <(${tree.program} completion zsh) after compinit, or save it as _${tree.program} in a folder of $fpath`),
    `__${stem}_node() {`,
    '  case "$1" in',
    ...cases,
    '    *) return 1 ;;',
    '  esac',
    '}',
    '',
    `_${stem}() {`,
    "  local cmdpath='' candidate i",
    '  local -a reply_subs reply_opts',
    '  for (( i = 2; i < CURRENT; i++ )); do',
    '    [[ ${words[i]} == -* ]] && continue',
    '    candidate="${cmdpath:+$cmdpath }${words[i]}"',
    `    __${stem}_node "$candidate" && cmdpath=$candidate`,
    '  done',
    `  __${stem}_node "$cmdpath"`,
    '  if [[ ${words[CURRENT]} == -* ]]; then',
    '    compadd -- $reply_opts',
    '  elif (( ${#reply_subs} )); then',
    "    _describe -t commands 'command' reply_subs",
    '  else',
    '    _files',
    '  fi',
    '}',
    `if [[ $funcstack[1] == _${tree.program} ]]; then _${stem} "$@"; else compdef _${stem} ${tree.program}; fi`,
    '',
  ].join('\n');
}

export function fishScript(tree: CompletionTree): string {
  const stem = functionStem(tree.program);
  const lines = [
    ...header(tree, 'fish', `${tree.program} completion fish > ~/.config/fish/completions/${tree.program}.fish`),
    `set -g __${stem}_paths ${tree.nodes.filter((n) => n.path).map((n) => fishQuote(n.path)).join(' ')}`,
    `function __${stem}_cmdpath`,
    "    set -l cmdpath ''",
    '    for word in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $word; and continue",
    '        set -l candidate (string trim -- "$cmdpath $word")',
    `        contains -- $candidate $__${stem}_paths; and set cmdpath $candidate`,
    '    end',
    '    echo $cmdpath',
    'end',
    `function __${stem}_at`,
    `    set -l cmdpath (__${stem}_cmdpath)`,
    '    test "$cmdpath" = "$argv[1]"',
    'end',
  ];
  for (const n of tree.nodes) {
    const when = fishQuote(`__${stem}_at ${fishQuote(n.path)}`);
    for (const s of n.subcommands) lines.push(`complete -c ${tree.program} -n ${when} -f -a ${fishQuote(s.name)} -d ${fishQuote(s.description)}`);
    for (const o of n.options) {
      const flags = o.flags.map((f) => (f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`)).join(' ');
      lines.push(`complete -c ${tree.program} -n ${when} ${flags} -d ${fishQuote(o.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(tree: CompletionTree, shell: Shell): string {
  if (shell === 'bash') return bashScript(tree);
  if (shell === 'zsh') return zshScript(tree);
  return fishScript(tree);
}
