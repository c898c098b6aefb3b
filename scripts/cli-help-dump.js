'use strict';
// Prints, as JSON {"<words>": "<help>"}, the --help text of every command of one program, from a
// single boot of the built CLI (scripts/gen-cli-docs.js; one process per command took ~90 s).
//   node scripts/cli-help-dump.js run-agent|conductor [extra top-level words...]
const path = require('node:path');

const SRC = path.join(__dirname, '..', 'dist', 'apps', 'cli', 'apps', 'cli', 'src');

async function main(program, extraTopLevel) {
  const { createNestCli } = require(path.join(SRC, 'nest-cli.js'));
  const { conductorArgv } = require(path.join(SRC, 'commands', 'server', 'conductor-dispatch.js'));
  const { root } = await createNestCli([], program);
  root.name(program);
  const find = (words) => {
    let cmd = root;
    for (const w of words) {
      cmd = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
      if (!cmd) return undefined;
    }
    return cmd;
  };
  const helpOf = (cmd) => {
    let out = '';
    cmd.configureOutput({ writeOut: (s) => (out += s) });
    cmd.outputHelp();
    return out;
  };
  const result = {};
  const visit = (words) => {
    const target = program === 'conductor' && words.length ? conductorArgv(words) : words;
    const cmd = find(target);
    if (!cmd) return;
    result[words.join(' ')] = helpOf(cmd);
    const names = cmd.commands.map((c) => c.name()).filter((n) => n !== 'help');
    if (words.length === 0) for (const w of extraTopLevel) if (!names.includes(w)) names.push(w);
    for (const name of names) visit([...words, name]);
  };
  visit([]);
  process.stdout.write(JSON.stringify(result));
}

main(process.argv[2], process.argv.slice(3)).then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(1);
  },
);
