// bin/launch.js picks the CLI bundle only when it is current and switches Node's compile cache on
// (docs/decisions.md, "CLI start-up: one bundle"). Real processes on a copy of bin/ with stand-in
// builds in a temp folder.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..', '..');

describe('bin/launch.js', () => {
  let pkg: string;
  let main: string;
  let bundle: string;
  const setTime = (file: string, seconds: number) => utimesSync(file, seconds, seconds);
  const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH, HOME: pkg, TMPDIR: pkg, ...extra });
  const launch = (extra: Record<string, string> = {}) => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), 'a', 'b'], { env: env(extra), encoding: 'utf8' });
  const program = (word: string) => `'use strict';\nexports.main = async (argv) => { process.stdout.write(${JSON.stringify(word)} + ' ' + (argv || []).join(',') + '\\n'); };\n`;

  beforeEach(() => {
    pkg = mkdtempSync(join(tmpdir(), 'launcher-'));
    mkdirSync(join(pkg, 'bin'));
    for (const f of ['run-agent', 'conductor', 'node-check.js', 'launch.js', 'bundle-loader.js', 'fnv1a64.js']) copyFileSync(join(REPO, 'bin', f), join(pkg, 'bin', f));
    main = join(pkg, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');
    bundle = join(pkg, 'dist', 'apps', 'cli', 'bundle', 'run-agent.js');
    mkdirSync(join(main, '..'), { recursive: true });
    mkdirSync(join(bundle, '..'), { recursive: true });
    writeFileSync(main, program('unbundled'));
    writeFileSync(bundle, program('bundle'));
    setTime(main, 1_000_000);
    setTime(bundle, 1_000_100);
  });
  afterEach(() => rmSync(pkg, { recursive: true, force: true }));

  it('runs the bundle when it is at least as new as the tsc build, else (or when asked) the tsc build', () => {
    expect(launch().stdout).toBe('bundle a,b\n');
    setTime(main, 1_000_200); // a bare `nest build cli` after the last bundle
    expect(launch().stdout).toBe('unbundled a,b\n');
    setTime(main, 1_000_000);
    expect(launch({ CONDUCTOR_CLI_UNBUNDLED: '1' }).stdout).toBe('unbundled a,b\n');
    rmSync(bundle);
    expect(launch().stdout).toBe('unbundled a,b\n');
  });

  describe('a bare conductor', () => {
    let apiEntry: string;
    let apiBundle: string;
    const conductor = (args: string[] = [], extra: Record<string, string> = {}) => spawnSync(process.execPath, [join(pkg, 'bin', 'conductor'), ...args], { env: env(extra), encoding: 'utf8' });
    // a stand-in of the API bundle's serve entry (apps/api/src/boot/serve.ts): says what ran and
    // whether Node's compile cache is on, and dies as a server may (no exit hook runs)
    const serveEntry = (word: string) =>
      `'use strict';\nexports.serveMain = async (program, flags) => { process.stdout.write(${JSON.stringify(word)} + ' ' + program + ' ' + typeof require('node:module').getCompileCacheDir() + (flags && flags.port ? ' port=' + flags.port : '') + '\\n');` +
      ` setImmediate(() => process.kill(process.pid, 'SIGKILL')); };\n`;
    const compileCache = 'string'; // getCompileCacheDir(): the cache is on

    // a stand-in of the serve flags' parse (libs/boot/src/serve-flags.ts): `--port N` only; notes each load in flags-loaded
    let apiFlags: string;
    const flagsLoads = () => (existsSync(join(pkg, 'flags-loaded')) ? readFileSync(join(pkg, 'flags-loaded'), 'utf8').length : 0);
    const flagsModule =
      `'use strict';\nrequire('node:fs').appendFileSync(require('node:path').join(__dirname, '${'../'.repeat(6)}flags-loaded'), 'x');\n` +
      `exports.serveFlagsFromArgv = (program, argv) => { const a = argv[0] === 'serve' ? argv.slice(1) : program === 'conductor' ? argv : undefined;\n` +
      `  if (!a) return undefined; if (a.length === 0) return {}; return a.length === 2 && a[0] === '--port' ? { port: a[1] } : undefined; };\n`;

    beforeEach(() => {
      apiFlags = join(pkg, 'dist', 'apps', 'api', 'libs', 'boot', 'src', 'serve-flags.js');
      apiEntry = join(pkg, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'serve.js');
      apiBundle = join(pkg, 'dist', 'apps', 'api', 'bundle', 'server.js');
      mkdirSync(join(apiEntry, '..'), { recursive: true });
      mkdirSync(join(apiBundle, '..'), { recursive: true });
      mkdirSync(join(apiFlags, '..'), { recursive: true });
      writeFileSync(apiEntry, serveEntry('api-unbundled'));
      writeFileSync(apiBundle, serveEntry('api-bundle'));
      writeFileSync(apiFlags, flagsModule);
      setTime(apiEntry, 1_000_000);
      setTime(apiBundle, 1_000_100);
    });

    it('runs the serve entry of the current API bundle, with the parsed flags, without loading the CLI; anything else goes to the CLI', () => {
      const runAgent = (args: string[]) => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), ...args], { env: env(), encoding: 'utf8' }).stdout;
      expect(conductor().stdout).toBe(`api-bundle conductor ${compileCache}\n`);
      expect(flagsLoads()).toBe(0); // a bare conductor has nothing to parse
      expect(conductor(['serve']).stdout).toBe(`api-bundle conductor ${compileCache}\n`);
      expect(conductor(['--port', '0']).stdout).toBe(`api-bundle conductor ${compileCache} port=0\n`);
      expect(conductor(['serve', '--port', '7']).stdout).toBe(`api-bundle conductor ${compileCache} port=7\n`);
      expect(runAgent(['serve', '--port', '7'])).toBe(`api-bundle run-agent ${compileCache} port=7\n`);
      // what the parse leaves (a usage error, --help, another command) goes to the CLI, which reports it
      expect(conductor(['--port']).stdout).toBe('bundle --port\n');
      expect(runAgent(['serve', '--help'])).toBe('bundle serve,--help\n');
      expect(conductor(['status']).stdout).toBe('bundle status\n');
      const loads = flagsLoads();
      expect(loads).toBeGreaterThan(0);
      expect(runAgent([])).toBe('bundle \n');
      expect(runAgent(['status'])).toBe('bundle status\n');
      // run-agent's other commands do not even load the flags module
      expect(flagsLoads()).toBe(loads);
      rmSync(apiFlags);
      expect(conductor(['--port', '0']).stdout).toBe('bundle --port,0\n'); // an API build without it: the CLI serves
    });

    it('goes through the CLI (its fast path) when the API bundle is older than the tsc build, missing, or declined', () => {
      setTime(apiEntry, 1_000_200); // a bare `nest build api` after the last bundle
      expect(conductor().stdout).toBe('bundle \n');
      setTime(apiEntry, 1_000_000);
      expect(conductor([], { CONDUCTOR_API_UNBUNDLED: '1' }).stdout).toBe('bundle \n');
      rmSync(apiBundle);
      expect(conductor().stdout).toBe('bundle \n');
      rmSync(apiEntry);
      writeFileSync(apiBundle, serveEntry('api-bundle'));
      expect(conductor().stdout).toBe('bundle \n'); // no tsc build of the API: not current either
    });

    it("loads the API bundle with Node's compile cache on, unless NODE_DISABLE_COMPILE_CACHE", () => {
      const first = conductor();
      expect([first.signal, first.stdout]).toEqual(['SIGKILL', 'api-bundle conductor string\n']);
      expect(conductor([], { NODE_DISABLE_COMPILE_CACHE: '1' }).stdout).toBe('api-bundle conductor undefined\n');
    });

    it('reports a serve entry that fails to load as one line, exit 1', () => {
      writeFileSync(apiBundle, `throw new Error('broken bundle');\n`);
      setTime(apiBundle, 1_000_100);
      const r = conductor([], { NODE_DISABLE_COMPILE_CACHE: '1' });
      expect([r.status, r.stderr]).toEqual([1, 'Error: broken bundle\n']);
    });
  });

  // the 'exit' listeners see how the process ends: through process.exit() (V8's heap is not torn down) or Node's own exit
  const endProbe = (extra = '') =>
    `'use strict';\nexports.main = async () => { process.exitCode = 3; ${extra}\n` +
    `  process.on('exit', () => process.stdout.write(/at process\\.exit /.test(new Error().stack) ? 'process.exit\\n' : 'natural\\n')); };\n`;

  it('ends an idle process with process.exit(), keeping the exit code the command set', () => {
    writeFileSync(bundle, endProbe());
    const r = launch();
    expect(r.stdout).toBe('process.exit\n');
    expect(r.status).toBe(3);
  });

  it('lets another beforeExit listener finish the work it schedules before the process ends', () => {
    const done = join(pkg, 'late-work');
    writeFileSync(bundle, endProbe(`process.once('beforeExit', () => setTimeout(() => require('node:fs').writeFileSync(${JSON.stringify(done)}, 'x'), 20));`));
    const r = launch();
    expect(existsSync(done)).toBe(true);
    expect(r.status).toBe(3);
  });

  it("runs the CLI with Node's compile cache on, unless NODE_DISABLE_COMPILE_CACHE", () => {
    writeFileSync(bundle, `'use strict';\nexports.main = async () => { process.stdout.write(typeof require('node:module').getCompileCacheDir()); };\n`);
    expect(launch().stdout).toBe('string');
    expect(launch({ NODE_DISABLE_COMPILE_CACHE: '1' }).stdout).toBe('undefined');
  });

  describe("the bundle's code cache (bin/bundle-loader.js)", () => {
    const caches = () => readdirSync(join(pkg, 'node-compile-cache'), { recursive: true }).map(String).filter((f) => f.endsWith('.v8cache'));
    const probe =
      `'use strict';\nexports.main = async () => { const line = new Error('here').stack.split('\\n')[1];\n` +
      `  process.stdout.write([__filename === require('node:path').join(__dirname, 'run-agent.js'), typeof module.exports.main, typeof require('node:fs').statSync, /run-agent\\.js:2:/.test(line)].join(' ') + '\\n'); };\n`;

    it('evaluates the bundle of a task or job as Node would (require, module, __filename, __dirname, line numbers) and writes one cache per command after its first successful run', () => {
      const run = (args: string[]) => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), ...args], { env: env(), encoding: 'utf8' });
      writeFileSync(bundle, probe);
      expect(run(['task']).stdout).toBe('true function function true\n');
      expect(caches()).toEqual([expect.stringMatching(/run-agent-bundle-.*-task\.v8cache$/)]);
      expect(run(['job']).stdout).toBe('true function function true\n');
      expect(caches().sort()).toEqual([expect.stringMatching(/-job\.v8cache$/), expect.stringMatching(/-task\.v8cache$/)]);
      // other commands, help and failed runs keep Node's compile cache alone
      expect(run(['watch']).stdout).toBe('true function function true\n');
      expect(run(['task', '--help']).stdout).toBe('true function function true\n');
      expect(caches()).toHaveLength(2);
      // the hot read commands have theirs
      expect(run(['status']).stdout).toBe('true function function true\n');
      expect(caches()).toHaveLength(3);
      rmSync(join(pkg, 'node-compile-cache'), { recursive: true, force: true });
      writeFileSync(bundle, `'use strict';\nexports.main = async () => { process.exitCode = 1; };\n`);
      expect(run(['task']).status).toBe(1);
      expect(caches()).toEqual([]);
    });

    it('ignores a cache that others may write (the compile cache folder may be a shared temporary one) and writes its own', () => {
      const task = () => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), 'task'], { env: env(), encoding: 'utf8' }).stdout;
      writeFileSync(bundle, program('first'));
      expect(task()).toBe('first task\n');
      const [name] = caches();
      const file = join(pkg, 'node-compile-cache', name);
      // a cache V8 would accept, but writable by others: not read, so the run writes its own (0600)
      chmodSync(file, 0o666);
      expect(task()).toBe('first task\n');
      expect(statSync(file).mode & 0o777).toBe(0o600);
    });

    it('never meets the cache of an earlier bundle, and keeps none with the compile cache off', () => {
      const task = (extra: Record<string, string> = {}) => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), 'task'], { env: env(extra), encoding: 'utf8' }).stdout;
      writeFileSync(bundle, program('first'));
      expect(task()).toBe('first task\n');
      expect(caches()).toHaveLength(1);
      const [first] = caches();
      writeFileSync(bundle, program('again')); // same length, new content
      setTime(bundle, 1_000_150);
      expect(task()).toBe('again task\n');
      // the new build's cache replaced the earlier one
      expect(caches()).toEqual([expect.stringMatching(/-task\.v8cache$/)]);
      expect(caches()).not.toContain(first);
      rmSync(join(pkg, 'node-compile-cache'), { recursive: true, force: true });
      expect(task({ NODE_DISABLE_COMPILE_CACHE: '1' })).toBe('again task\n');
      expect(existsSync(join(pkg, 'node-compile-cache'))).toBe(false);
    });
  });

  it('says how to build when nothing is built', () => {
    rmSync(main);
    const r = launch();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^run-agent: the CLI is not built \(missing .*main\.js\); run `npm ci && npm run build`/);
  });
});
