// bin/launch.js picks the CLI bundle only when it is current, and bin/code-cache.js keeps V8's
// cached data of it safely (docs/decisions.md, "CLI start-up: one bundle"). Real processes on a
// copy of bin/ with stand-in builds in a temp folder.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodeModule from 'node:module';
import { join } from 'node:path';

const REPO = join(__dirname, '..', '..', '..');

describe('bin/launch.js and bin/code-cache.js', () => {
  let pkg: string;
  let main: string;
  let bundle: string;
  let cacheHome: string;
  const setTime = (file: string, seconds: number) => utimesSync(file, seconds, seconds);
  const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH, HOME: pkg, XDG_CACHE_HOME: cacheHome, ...extra });
  const launch = (extra: Record<string, string> = {}) => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), 'a', 'b'], { env: env(extra), encoding: 'utf8' });
  /** Loads `file` through the code cache, as the launcher does on Node without enableCompileCache. */
  const viaCache = (file: string, variant = 'status') =>
    spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(pkg, 'bin', 'code-cache.js'))}).requireWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(variant)}).main()`], {
      env: env(),
      encoding: 'utf8',
    });
  const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.bin')) : []);
  const program = (word: string) => `'use strict';\nexports.main = async (argv) => { process.stdout.write(${JSON.stringify(word)} + ' ' + (argv || []).join(',') + '\\n'); };\n`;

  beforeEach(() => {
    pkg = mkdtempSync(join(tmpdir(), 'launcher-'));
    cacheHome = join(pkg, 'cache-home');
    mkdirSync(join(pkg, 'bin'));
    for (const f of ['run-agent', 'conductor', 'launch.js', 'code-cache.js']) copyFileSync(join(REPO, 'bin', f), join(pkg, 'bin', f));
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
    // a stand-in of the API bundle's serve entry (apps/api/src/boot/serve.ts): says what ran, calls the launcher's
    // hook as the server does once it listens, and dies as a server may (no exit hook runs)
    const serveEntry = (word: string) =>
      `'use strict';\nexports.serveMain = async (program, hooks, flags) => { process.stdout.write(${JSON.stringify(word)} + ' ' + program + ' ' + typeof (hooks && hooks.onListening) + (flags && flags.port ? ' port=' + flags.port : '') + '\\n');` +
      ` if (hooks && hooks.onListening) hooks.onListening(); setImmediate(() => process.kill(process.pid, 'SIGKILL')); };\n`;
    // Node >= 22.1 caches compiled code itself (module.enableCompileCache): then the launcher has no hook to pass
    const hook = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function' ? 'undefined' : 'function';

    // a stand-in of the serve flags' parse (apps/api/src/boot/serve-flags.ts): `--port N` only; notes each load in flags-loaded
    let apiFlags: string;
    const flagsLoads = () => (existsSync(join(pkg, 'flags-loaded')) ? readFileSync(join(pkg, 'flags-loaded'), 'utf8').length : 0);
    const flagsModule =
      `'use strict';\nrequire('node:fs').appendFileSync(require('node:path').join(__dirname, '${'../'.repeat(7)}flags-loaded'), 'x');\n` +
      `exports.serveFlagsFromArgv = (program, argv) => { const a = argv[0] === 'serve' ? argv.slice(1) : program === 'conductor' ? argv : undefined;\n` +
      `  if (!a) return undefined; if (a.length === 0) return {}; return a.length === 2 && a[0] === '--port' ? { port: a[1] } : undefined; };\n`;

    beforeEach(() => {
      apiFlags = join(pkg, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'serve-flags.js');
      apiEntry = join(pkg, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'serve.js');
      apiBundle = join(pkg, 'dist', 'apps', 'api', 'bundle', 'server.js');
      mkdirSync(join(apiEntry, '..'), { recursive: true });
      mkdirSync(join(apiBundle, '..'), { recursive: true });
      writeFileSync(apiEntry, serveEntry('api-unbundled'));
      writeFileSync(apiBundle, serveEntry('api-bundle'));
      writeFileSync(apiFlags, flagsModule);
      setTime(apiEntry, 1_000_000);
      setTime(apiBundle, 1_000_100);
    });

    it('runs the serve entry of the current API bundle, with the parsed flags, without loading the CLI; anything else goes to the CLI', () => {
      const runAgent = (args: string[]) => spawnSync(process.execPath, [join(pkg, 'bin', 'run-agent'), ...args], { env: env(), encoding: 'utf8' }).stdout;
      expect(conductor().stdout).toBe(`api-bundle conductor ${hook}\n`);
      expect(flagsLoads()).toBe(0); // a bare conductor has nothing to parse
      expect(conductor(['serve']).stdout).toBe(`api-bundle conductor ${hook}\n`);
      expect(conductor(['--port', '0']).stdout).toBe(`api-bundle conductor ${hook} port=0\n`);
      expect(conductor(['serve', '--port', '7']).stdout).toBe(`api-bundle conductor ${hook} port=7\n`);
      expect(runAgent(['serve', '--port', '7'])).toBe(`api-bundle run-agent ${hook} port=7\n`);
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

    it('loads the API bundle through the code cache (on Node without enableCompileCache) and saves it once the server listens', () => {
      const first = conductor();
      const dir = join(apiBundle, '..', '.v8-cache');
      expect([first.signal, first.stdout]).toEqual(['SIGKILL', `api-bundle conductor ${hook}\n`]);
      if (hook === 'undefined') {
        // Node's own compile cache serves instead: no file of ours
        expect(existsSync(dir)).toBe(false);
        return;
      }
      const [name] = cacheFiles(dir);
      expect(name).toMatch(/^server\.js-\d+-\d+-v\d+\.\d+\.\d+-\w+\.bin$/);
      expect(existsSync(join(dir, `${name}.serve`))).toBe(true);
      expect(conductor().stdout).toBe('api-bundle conductor function\n');
      expect(cacheFiles(dir)).toEqual([name]);
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

  it('says how to build when nothing is built', () => {
    rmSync(main);
    const r = launch();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^run-agent: the CLI is not built \(missing .*main\.js\); run `npm ci && npm run build`/);
  });

  it('stores the cached data beside the bundle after the first run and reuses it unchanged', () => {
    const dir = join(bundle, '..', '.v8-cache');
    expect(viaCache(bundle).stdout).toBe('bundle \n');
    const [name] = cacheFiles(dir);
    expect(name).toMatch(/^run-agent\.js-\d+-\d+-v\d+\.\d+\.\d+-\w+\.bin$/);
    const first = statSync(join(dir, name)).mtimeMs;
    setTime(join(dir, name), 1_000); // an accepted cache is not written again
    expect(viaCache(bundle).stdout).toBe('bundle \n');
    expect(statSync(join(dir, name)).mtimeMs).toBe(1_000_000);
    expect(first).toBeGreaterThan(1_000_000);
    expect(cacheFiles(dir)).toEqual([name]);
  });

  it('saveCodeCache writes the cached data before the process ends, so a server killed later keeps it', () => {
    const dir = join(bundle, '..', '.v8-cache');
    const cacheJs = JSON.stringify(join(pkg, 'bin', 'code-cache.js'));
    // the process is SIGKILLed right after saving: no exit hook runs
    const serve = () =>
      spawnSync(process.execPath, ['-e', `const c = require(${cacheJs}); c.requireWithCodeCache(${JSON.stringify(bundle)}, 'serve').main().then(() => { process.stdout.write(String(c.saveCodeCache(${JSON.stringify(bundle)}))); process.kill(process.pid, 'SIGKILL'); })`], {
        env: env(),
        encoding: 'utf8',
      });
    const first = serve();
    expect([first.signal, first.stdout]).toEqual(['SIGKILL', 'bundle \ntrue']);
    const [name] = cacheFiles(dir);
    expect(name).toMatch(/^run-agent\.js-.*\.bin$/);
    expect(existsSync(join(dir, `${name}.serve`))).toBe(true);
    // accepted and already marked for this variant: nothing left to save
    expect(serve().stdout).toBe('bundle \nfalse');
  });

  it('lets each command add the functions it compiled once', () => {
    const dir = join(bundle, '..', '.v8-cache');
    viaCache(bundle, 'status');
    const [name] = cacheFiles(dir);
    setTime(join(dir, name), 1_000);
    expect(viaCache(bundle, 'status').stdout).toBe('bundle \n');
    expect(statSync(join(dir, name)).mtimeMs).toBe(1_000_000);
    expect(viaCache(bundle, 'job').stdout).toBe('bundle \n'); // not yet in the cache: rewritten and marked
    expect(statSync(join(dir, name)).mtimeMs).toBeGreaterThan(1_000_000);
    setTime(join(dir, name), 1_000);
    expect(viaCache(bundle, 'job').stdout).toBe('bundle \n');
    expect(statSync(join(dir, name)).mtimeMs).toBe(1_000_000);
    expect(readdirSync(dir).sort()).toEqual([name, `${name}.job`, `${name}.status`]);
  });

  it('replaces cached data that V8 rejects and still runs the program', () => {
    const dir = join(bundle, '..', '.v8-cache');
    viaCache(bundle);
    const [name] = cacheFiles(dir);
    writeFileSync(join(dir, name), 'not V8 data');
    expect(viaCache(bundle).stdout).toBe('bundle \n');
    expect(readFileSync(join(dir, name), 'utf8')).not.toBe('not V8 data');
    expect(statSync(join(dir, name)).size).toBeGreaterThan(100);
  });

  it('never runs the cached code of another build of the same length', () => {
    viaCache(bundle);
    writeFileSync(bundle, program('BUNDLE')); // same length, other code, newer file
    setTime(bundle, 1_000_500);
    expect(viaCache(bundle).stdout).toBe('BUNDLE \n');
  });

  it('falls back to the user cache folder when the bundle folder takes no cache', () => {
    writeFileSync(join(bundle, '..', '.v8-cache'), 'a file where the folder would be');
    expect(viaCache(bundle).stdout).toBe('bundle \n');
    expect(cacheFiles(join(cacheHome, 'conductor-loop', 'v8-cache'))).toHaveLength(1);
    expect(viaCache(bundle).stdout).toBe('bundle \n');
  });
});
