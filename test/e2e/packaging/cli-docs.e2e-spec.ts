// docs/cli-reference.md is generated from the built commands' --help; this fails when it drifts.
import { readFileSync } from 'node:fs';
import { assertBuilt } from './packaging-helpers';

const { generate, subcommandNames, DOC } = require('../../../scripts/gen-cli-docs.js') as {
  generate: () => Promise<string>;
  subcommandNames: (help: string) => string[];
  DOC: string;
};

describe('docs/cli-reference.md', () => {
  it('reads subcommand names from commander help, skipping help, aliases and wrapped description lines', () => {
    const help = [
      'Usage: run-agent bus [options] [command]',
      '',
      'Options:',
      '  -h, --help      display help for command',
      '',
      'Commands:',
      '  post [options]  Post a message to the message bus (prints',
      '                  msg_id: <id>)',
      '  read|r [options]  Print messages',
      '  help [command]  display help for command',
    ].join('\n');
    expect(subcommandNames(help)).toEqual(['post', 'read']);
  });

  it('matches the commands\' --help (regenerate with `npm run docs:cli`)', async () => {
    assertBuilt();
    const expected = await generate();
    expect(expected).toContain('### `run-agent bus post`');
    expect(expected).toContain('### `conductor status`');
    expect(readFileSync(DOC, 'utf8')).toBe(expected);
  }, 240_000);
});
