import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../unit/messagebus/tmp';
import { cleanEnv, repoRoot, requireBuild } from './bus-helpers';

// What the Nest path loads (docs/decisions.md, "CLI start-up"): one command group's module, no
// inquirer/lodash, rxjs from its one-file bundle — with the same command tree as the full CLI.
const distCli = join(repoRoot, 'dist', 'apps', 'cli', 'apps', 'cli', 'src');

/** Runs `script` in a fresh node; it reports its findings as JSON on stderr after `PROBE `. */
function probe(script: string, env: NodeJS.ProcessEnv, cwd: string): unknown {
  const r = spawnSync(process.execPath, ['-e', script], { env, cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`probe failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stderr.slice(r.stderr.lastIndexOf('PROBE ') + 6));
}

describe('CLI start-up: lazily loaded command groups', () => {
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => requireBuild());
  beforeEach(() => ({ dir, cleanup } = tempDir('cli-start-')));
  afterEach(() => cleanup());

  it('every grouped command has the same tree (subcommands, flags, descriptions) as in the full CLI', () => {
    const script = `
      const { createNestCli } = require(${JSON.stringify(join(distCli, 'nest-cli.js'))});
      const { GROUP_OF_COMMAND } = require(${JSON.stringify(join(distCli, 'cli.module.js'))});
      const shape = (c) => ({ name: c.name(), description: c.description(),
        options: c.options.map((o) => o.flags + ' ' + o.description), commands: c.commands.map(shape) });
      (async () => {
        const full = (await createNestCli([], 'run-agent')).root;
        const out = { full: full.commands.map((c) => c.name()), mapped: Object.keys(GROUP_OF_COMMAND), diffs: [] };
        for (const name of out.mapped) {
          const lazy = (await createNestCli([name], 'run-agent')).root.commands.find((c) => c.name() === name);
          const whole = full.commands.find((c) => c.name() === name);
          if (!lazy || !whole || JSON.stringify(shape(lazy)) !== JSON.stringify(shape(whole))) out.diffs.push(name);
        }
        process.stderr.write('PROBE ' + JSON.stringify(out));
        process.exit(0);
      })();`;
    const out = probe(script, cleanEnv(dir), dir) as { full: string[]; mapped: string[]; diffs: string[] };
    expect(out.mapped.length).toBeGreaterThan(20);
    expect(out.mapped.filter((n) => !out.full.includes(n))).toEqual([]);
    expect(out.diffs).toEqual([]);
  });

  // `list` itself runs on the plain composition root (apps/cli/src/fast); this is its Nest form (test/e2e/di runs both)
  it('`list` on the Nest path boots without inquirer, lodash, the rxjs CommonJS tree or other groups’ commands; prompting still loads on use', () => {
    const root = join(dir, 'runs');
    mkdirSync(root, { recursive: true });
    const script = `
      require(${JSON.stringify(join(distCli, 'nest-cli.js'))}).runNestCli(['list', '--root', ${JSON.stringify(root)}], 'run-agent').then(() => {
        const files = Object.keys(require.cache);
        const loaded = (re) => files.filter((f) => re.test(f)).length;
        const nc = require.resolve('nest-commander', { paths: [${JSON.stringify(repoRoot)}] });
        const inquirer = require(require.resolve('inquirer', { paths: [require('path').dirname(nc)] }));
        process.stderr.write('PROBE ' + JSON.stringify({
          inquirerBefore: loaded(/node_modules\\/inquirer\\/lib\\/(prompts|ui|objects|utils)\\//), lodash: loaded(/node_modules\\/lodash\\//),
          rxjsFiles: loaded(/node_modules\\/rxjs\\/dist\\/cjs\\/internal\\//),
          otherGroups: loaded(/commands\\/(server|orchestration|engine|needs-input|completion)\\/.*\\.commands?\\.js$/),
          listCommand: loaded(/commands\\/inspect\\/list\\.command\\.js$/),
          prompt: typeof inquirer.prompt,
        }));
      });`;
    const out = probe(script, cleanEnv(dir), dir) as Record<string, unknown>;
    expect(out).toEqual({ inquirerBefore: 0, lodash: 0, rxjsFiles: 0, otherGroups: 0, listCommand: 1, prompt: 'function' });
  });
});
