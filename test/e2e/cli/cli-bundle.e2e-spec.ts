// The built CLI runs from its one-file bundle (scripts/bundle-cli.js; docs/decisions.md, "CLI
// start-up: one bundle"): what it loads, and that it behaves as the unbundled build does.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../unit/messagebus/tmp';
import { cleanEnv, repoRoot, runAgentBin } from './bus-helpers';

const BUNDLE = join(repoRoot, 'dist', 'apps', 'cli', 'bundle', 'run-agent.js');
const MAIN = join(repoRoot, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');

/** Preloaded into the CLI: records the files it required, the packages Node resolved, and the DateTimeFormats built. */
const PROBE = `
const fs = require('node:fs');
let formats = 0;
const RealFormat = Intl.DateTimeFormat;
Intl.DateTimeFormat = new Proxy(RealFormat, { construct: (t, a) => (formats++, Reflect.construct(t, a)), apply: (t, self, a) => (formats++, Reflect.apply(t, self, a)) });
const Module = require('node:module');
const resolveFilename = Module._resolveFilename;
const asked = [];
Module._resolveFilename = function (request, ...rest) { asked.push(request); return resolveFilename.call(this, request, ...rest); };
// reflect-metadata (Reflect.getMetadata) is loaded by NestJS and nest-commander, and by nothing on the plain composition root
process.on('exit', () => fs.writeFileSync(process.env.PROBE_OUT, JSON.stringify({ files: Object.keys(require.cache), formats, asked, reflect: typeof Reflect.getMetadata })));
`;

/** Preloaded into the CLI: the Node built-ins loaded at each process it spawns, and at exit. */
const SPAWN_PROBE = `
const fs = require('node:fs');
const cp = require('node:child_process');
const builtins = () => process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13));
const spawns = [];
const spawn = cp.ChildProcess.prototype.spawn;
cp.ChildProcess.prototype.spawn = function (opts) {
  spawns.push({ file: opts.file, args: opts.args, builtins: builtins() });
  return spawn.call(this, opts);
};
process.on('exit', () => fs.writeFileSync(process.env.PROBE_OUT, JSON.stringify({ spawns, atExit: builtins() })));
`;

describe('CLI bundle', () => {
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => {
    // `npm run build` (and `npm run build:cli`) bundle after `nest build cli`
    if ((statSync(BUNDLE, { throwIfNoEntry: false })?.mtimeMs ?? 0) < statSync(MAIN).mtimeMs) throw new Error(`the CLI bundle is missing or older than ${MAIN}: run \`npm run build:cli\``);
  });
  beforeEach(() => ({ dir, cleanup } = tempDir('cli-bundle-')));
  afterEach(() => cleanup());

  const run = (args: string[], extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, [runAgentBin, ...args], { env: cleanEnv(dir, extra), cwd: dir, encoding: 'utf8' });

  it('bin/run-agent loads one file of ours and no NestJS file (nor searches for one), inquirer, cosmiconfig or Intl formatter', () => {
    const root = join(dir, 'runs');
    mkdirSync(root);
    const probe = join(dir, 'probe.js');
    writeFileSync(probe, PROBE);
    const out = join(dir, 'probe.json');
    // Node's require loads the bundle (no code cache: bin/bundle-loader.js would evaluate it through vm, unseen by require.cache)
    const env = cleanEnv(dir, { PROBE_OUT: out, NODE_DISABLE_COMPILE_CACHE: '1' });
    const r = spawnSync(process.execPath, ['-r', probe, runAgentBin, 'list', '--root', root], { env, cwd: dir, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([0, `no runs yet in ${root} (start one with \`run-agent task\`)\n`]);
    const seen = JSON.parse(readFileSync(out, 'utf8')) as { files: string[]; formats: number; asked: string[] };
    const ours = seen.files.filter((f) => f.startsWith(join(repoRoot, 'dist')));
    expect(ours).toEqual([BUNDLE]);
    expect(seen.files.filter((f) => /node_modules[\\/](@nestjs|nest-commander|inquirer|cosmiconfig|rxjs|lodash)[\\/]/.test(f))).toEqual([]);
    expect(seen.formats).toBe(0);
    // NestJS's optional @nestjs/microservices and @nestjs/websockets are absent inside the bundle (absent.js): no node_modules search
    expect(seen.asked.filter((r) => r.startsWith('@nestjs/'))).toEqual([]);
  });

  it('`status` and `list` run on the plain composition root: no NestJS or nest-commander module evaluates', () => {
    const root = join(dir, 'runs');
    mkdirSync(join(root, 'proj'), { recursive: true });
    const probe = join(dir, 'probe.js');
    writeFileSync(probe, PROBE);
    const out = join(dir, 'probe.json');
    for (const args of [['status', '--project', 'proj'], ['list', '--project', 'proj', '--json'], ['list']]) {
      const r = spawnSync(process.execPath, ['-r', probe, runAgentBin, ...args, '--root', root], { env: cleanEnv(dir, { PROBE_OUT: out }), cwd: dir, encoding: 'utf8' });
      expect([args, r.status, r.stderr]).toEqual([args, 0, '']);
      const seen = JSON.parse(readFileSync(out, 'utf8')) as { reflect: string; formats: number };
      expect([args, seen.reflect, seen.formats]).toEqual([args, 'undefined', 0]);
    }
    // the Nest path (a usage error: commander words it) does load them
    const bad = spawnSync(process.execPath, ['-r', probe, runAgentBin, 'status', '--bogus', '--root', root], { env: cleanEnv(dir, { PROBE_OUT: out }), cwd: dir, encoding: 'utf8' });
    expect([bad.status, bad.stderr]).toEqual([2, "Error: unknown option '--bogus'\n"]);
    expect((JSON.parse(readFileSync(out, 'utf8')) as { reflect: string }).reflect).toBe('function');
  });

  it('`task` and `job` run on the plain composition root: the runner, agent registry and webhook service load no NestJS module', () => {
    const root = join(dir, 'runs');
    const agent = join(dir, 'agent.sh');
    writeFileSync(agent, '#!/bin/sh\ncat >/dev/null\n: > "$JRUN_TASK_FOLDER/DONE"\necho done\n', { mode: 0o755 });
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `agents:\n  fast:\n    type: command\n    command: ${agent}\ndefaults:\n  agent: fast\n`);
    const probe = join(dir, 'probe.js');
    writeFileSync(probe, PROBE);
    const out = join(dir, 'probe.json');
    const common = ['--root', root, '--project', 'p', '--config', config, '--prompt', 'x'];
    for (const args of [['task', '--task', 'task-20260101-000000-plain', '--restart-delay', '0s', ...common], ['job', '--task', 'task-20260101-000000-plainjob', ...common]]) {
      const r = spawnSync(process.execPath, ['-r', probe, runAgentBin, ...args], { env: cleanEnv(dir, { PROBE_OUT: out }), cwd: dir, encoding: 'utf8' });
      expect([args[0], r.status]).toEqual([args[0], 0]);
      const seen = JSON.parse(readFileSync(out, 'utf8')) as { reflect: string; formats: number };
      expect([args[0], seen.reflect, seen.formats]).toEqual([args[0], 'undefined', 0]);
    }
  });

  it('`run-agent task` starts its agent before loading node:crypto, http or fs/promises (LAZY in scripts/bundle-cli.js), which still load when used', () => {
    const root = join(dir, 'runs');
    const agent = join(dir, 'agent.sh');
    writeFileSync(agent, '#!/bin/sh\ncat >/dev/null\n: > "$JRUN_TASK_FOLDER/DONE"\necho done\n', { mode: 0o755 });
    const config = join(dir, 'config.yaml');
    writeFileSync(config, `agents:\n  fast:\n    type: command\n    command: ${agent}\ndefaults:\n  agent: fast\n`);
    const probe = join(dir, 'spawn-probe.js');
    writeFileSync(probe, SPAWN_PROBE);
    const out = join(dir, 'spawns.json');
    const r = spawnSync(process.execPath, ['-r', probe, runAgentBin, 'task', '--root', root, '--project', 'p', '--task', 'task-20260101-000000-lazy', '--config', config, '--prompt', 'x', '--restart-delay', '0s'], { env: cleanEnv(dir, { PROBE_OUT: out }), cwd: dir, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([0, expect.stringContaining('DONE')]);
    const seen = JSON.parse(readFileSync(out, 'utf8')) as { spawns: { file: string; args: string[]; builtins: string[] }[]; atExit: string[] };
    const atAgent = seen.spawns.find((s) => s.args.includes(agent) || s.file === agent);
    expect(atAgent).toBeDefined();
    expect(atAgent!.builtins.filter((m) => /^(crypto|http|fs\/promises)$/.test(m))).toEqual([]);
    // loaded once used: the task's completion record hashes its facts with node:crypto after the run
    expect(seen.atExit).toContain('crypto');
  });

  it('prints the same help and usage errors as the unbundled build', () => {
    for (const args of [['--help'], ['task', '--help'], ['bus', 'read', '--help'], ['status', '--bogus'], ['no-such-command']]) {
      const bundled = run(args);
      const unbundled = run(args, { CONDUCTOR_CLI_UNBUNDLED: '1' });
      expect({ args, status: bundled.status, stdout: bundled.stdout, stderr: bundled.stderr }).toEqual({
        args,
        status: unbundled.status,
        stdout: unbundled.stdout,
        stderr: unbundled.stderr,
      });
    }
  });

  it('is plain ASCII (V8 keeps it as a one-byte string)', () => {
    expect(readFileSync(BUNDLE).findIndex((b) => b > 0x7f)).toBe(-1);
  });
});
