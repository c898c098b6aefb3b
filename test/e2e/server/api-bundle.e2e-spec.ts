/**
 * The server users start (a bare bin/conductor, `run-agent serve`) loads the API from its one-file
 * bundle (scripts/bundle-api.js; docs/decisions.md, "Server start-up: one bundle"); `conductor`,
 * `conductor [serve] --flags` and `run-agent serve --flags` load nothing of the CLI. The lazy packages stay unloaded, and the tsc build serves
 * when asked. Needs `npm run build`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONDUCTOR, getJson, REPO, RUN_AGENT, runCli, startServer } from './helpers';

const API_BUNDLE = join(REPO, 'dist', 'apps', 'api', 'bundle', 'server.js');
const API_ENTRY = join(REPO, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'boot', 'serve.js');
const CLI_BUNDLE = join(REPO, 'dist', 'apps', 'cli', 'bundle', 'run-agent.js');
// the serve flags the launcher parses (libs/boot/src/serve-flags.ts, plain modules of the tsc build)
const API_FLAGS = [
  join(REPO, 'dist', 'apps', 'api', 'libs', 'boot', 'src', 'serve-flags.js'),
  join(REPO, 'dist', 'apps', 'api', 'libs', 'boot', 'src', 'flag-args.js'),
  join(REPO, 'dist', 'apps', 'api', 'libs', 'storage', 'src', 'config', 'config.types.js'),
];

/** Preloaded into the server: at exit, the files and the Node built-ins it really loaded (require-cache stand-ins are not Module objects). */
const PROBE = `
const fs = require('node:fs');
const Module = require('node:module');
process.on('exit', () => fs.writeFileSync(process.env.PROBE_OUT, JSON.stringify({
  files: Object.keys(require.cache).filter((f) => require.cache[f] instanceof Module),
  builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)),
})));
`;
interface Loaded {
  files: string[];
  builtins: string[];
}

describe('API server bundle', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let probe: string;

  beforeAll(() => {
    // `npm run build` (and `npm run build:api`) bundle after `nest build api`
    if ((statSync(API_BUNDLE, { throwIfNoEntry: false })?.mtimeMs ?? 0) < statSync(API_ENTRY).mtimeMs) throw new Error(`the API bundle is missing or older than ${API_ENTRY}: run \`npm run build:api\``);
    dir = mkdtempSync(join(tmpdir(), 'api-bundle-'));
    probe = join(dir, 'probe.js');
    writeFileSync(probe, PROBE);
    // no UI build in CONDUCTOR_UI_DIR: @fastify/static is not needed
    env = { HOME: dir, CONDUCTOR_HOST: '127.0.0.1', CONDUCTOR_PORT: '0', CONDUCTOR_ROOT: join(dir, 'runs'), CONDUCTOR_CONFIG: '', CONDUCTOR_API_KEY: '', CONDUCTOR_URL: '', CONDUCTOR_UI_DIR: dir, CONDUCTOR_NO_AUTH: '1' };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the server with the probe, checks it answers, stops it; returns the files and built-ins it loaded and what it printed. */
  async function startAndStop(bin: string, args: string[], extra: NodeJS.ProcessEnv, name: string): Promise<Loaded & { stdout: string; port: number }> {
    const out = join(dir, `${name}.json`);
    const server = await startServer(bin, args, { ...env, ...extra, PROBE_OUT: out, NODE_OPTIONS: `--require ${probe}` }, dir);
    try {
      expect(await getJson(`${server.url}/api/v1/health`)).toEqual({ status: 200, body: { status: 'ok' } });
      expect((await getJson(`${server.url}/api/v1/status`)).status).toBe(200);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
    expect(server.stderr()).toContain('received SIGTERM: shutting down');
    return { ...(JSON.parse(readFileSync(out, 'utf8')) as Loaded), stdout: server.stdout(), port: server.port };
  }
  const loadedFiles = async (bin: string, args: string[], extra: NodeJS.ProcessEnv, name: string) => (await startAndStop(bin, args, extra, name)).files;

  const ours = (files: string[]) => files.filter((f) => f.startsWith(join(REPO, 'dist')));
  // what an idle server never loads, bundled or not (boot/lean-load.ts; scripts/bundle-api.js: EXTERNAL, LAZY)
  const lazyPackages = (files: string[]) => files.filter((f) => /node_modules[\\/](@modelcontextprotocol|@opentelemetry|@nats-io|validator|libphonenumber-js)[\\/]/.test(f));
  // Node's require loads nothing from node_modules but the native flock addon
  const fromNodeModules = (files: string[]) => files.filter((f) => /node_modules[\\/]/.test(f) && !/node_modules[\\/]fs-ext[\\/]/.test(f));
  const lazyBuiltins = (builtins: string[]) => builtins.filter((m) => /^(http2|https|tls|internal\/deps\/undici\/undici)$/.test(m));

  it('a bare conductor loads the API bundle only: no file of the CLI (bundle or tsc build), no NestJS, Fastify or rxjs file, nor the lazy packages and built-ins', async () => {
    const { files, builtins } = await startAndStop(CONDUCTOR, [], {}, 'bare');
    expect(ours(files)).toEqual([API_BUNDLE]);
    expect(files.filter((f) => f.startsWith(join(REPO, 'dist', 'apps', 'cli')))).toEqual([]);
    expect(fromNodeModules(files)).toEqual([]);
    expect(lazyBuiltins(builtins)).toEqual([]);
    // what was left out is still there when used: the server above answered /api/v1/status
    expect(builtins).toEqual(expect.arrayContaining(['http', 'crypto']));
  });

  // the start-up lines with the port and the program name taken out
  const lines = (r: { stdout: string; port: number }) => r.stdout.replaceAll(`:${r.port}/`, ':PORT/').replace(/^(conductor|run-agent) /, 'PROGRAM ');

  it('conductor serve, conductor --flags and run-agent serve --flags start like a bare conductor: the API bundle alone, no CLI file, the same start-up lines', async () => {
    const settings = { CONDUCTOR_DISABLE_TASK_START: '1', CONDUCTOR_ROOT: join(dir, 'same-root') };
    const bare = await startAndStop(CONDUCTOR, [], settings, 'same-bare');
    expect(bare.stdout).toMatch(/^conductor \S+\n/);
    expect(lines(bare)).toContain(`Task start is disabled (monitoring mode)\nRuns root: ${settings.CONDUCTOR_ROOT}\n`);
    const flagRoot = join(dir, 'flag-root');
    const flags = ['--port', '0', `--root=${flagRoot}`, '--disable-task-start'];
    const runs = [
      [CONDUCTOR, ['serve'], 'conductor', 'same-serve', settings],
      [RUN_AGENT, ['serve'], 'run-agent', 'same-run-agent', settings],
      [CONDUCTOR, flags, 'conductor', 'flags-conductor', { CONDUCTOR_PORT: '1' }],
      [CONDUCTOR, ['serve', ...flags], 'conductor', 'flags-conductor-serve', { CONDUCTOR_PORT: '1' }],
      [RUN_AGENT, ['serve', ...flags], 'run-agent', 'flags-run-agent', { CONDUCTOR_PORT: '1' }],
    ] as const;
    for (const [bin, args, program, name, extra] of runs) {
      const r = await startAndStop(bin, [...args], extra, name);
      expect(r.stdout.startsWith(`${program} `)).toBe(true);
      // the flags win over CONDUCTOR_PORT / CONDUCTOR_ROOT, as on the CLI path
      expect(lines(r)).toBe(extra === settings ? lines(bare) : lines(bare).replace(settings.CONDUCTOR_ROOT, flagRoot));
      expect(ours(r.files).sort()).toEqual([API_BUNDLE, ...API_FLAGS].sort());
      expect(lazyPackages(r.files)).toEqual([]);
      expect(lazyBuiltins(r.builtins)).toEqual([]);
    }
  });

  it('the same flags through the CLI (the API bundle not current) give the same start-up lines', async () => {
    const flagRoot = join(dir, 'flag-root');
    const viaBundle = await startAndStop(RUN_AGENT, ['serve', '--port', '0', '--root', flagRoot, '--disable-task-start'], {}, 'cli-lean');
    const viaCli = await startAndStop(RUN_AGENT, ['serve', '--port', '0', '--root', flagRoot, '--disable-task-start'], { CONDUCTOR_API_UNBUNDLED: '1' }, 'cli-nest');
    expect(ours(viaCli.files)).toEqual(expect.arrayContaining([CLI_BUNDLE, API_ENTRY]));
    expect(lines(viaCli)).toBe(lines(viaBundle));
  });

  it('bad serve flags and --help get the CLI\'s words and exit codes', async () => {
    const noServer = { CONDUCTOR_PORT: '' };
    const cases = [
      [RUN_AGENT, ['serve', '--port', 'abc'], 2, 'Error: invalid --port "abc": must be a port number between 0 and 65535\n'],
      [CONDUCTOR, ['--port', 'abc'], 2, 'Error: invalid --port "abc": must be a port number between 0 and 65535\n'],
      [RUN_AGENT, ['serve', '--bogus'], 2, "Error: unknown option '--bogus'\n"],
      [CONDUCTOR, ['--bogus'], 2, "Error: unknown option '--bogus'\n"],
      [RUN_AGENT, ['serve', '--port'], 2, "Error: option '--port <port>' argument missing\n"],
      [CONDUCTOR, ['serve', '--disable-task-start=yes'], 2, "Error: unknown option '--disable-task-start=yes'\n"],
    ] as const;
    for (const [bin, args, code, stderr] of cases) {
      const r = await runCli(bin, [...args], { ...env, ...noServer });
      expect([args, r.code, r.stderr, r.stdout]).toEqual([args, code, stderr, '']);
    }
    for (const [bin, args, usage] of [[RUN_AGENT, ['serve', '--help'], 'Usage: run-agent serve [options]'], [CONDUCTOR, ['serve', '-h'], 'Usage: conductor serve [options]']] as const) {
      const r = await runCli(bin, [...args], env);
      expect(r.code).toBe(0);
      expect(r.stdout.startsWith(`${usage}\n\nStart the conductor API server and web dashboard\n`)).toBe(true);
      expect(r.stdout).toContain('--nats-tls-key <file>');
    }
  });

  it('CONDUCTOR_API_UNBUNDLED=1 serves from the tsc build instead', async () => {
    const files = await loadedFiles(CONDUCTOR, [], { CONDUCTOR_API_UNBUNDLED: '1' }, 'unbundled');
    expect(ours(files)).toContain(API_ENTRY);
    expect(ours(files)).not.toContain(API_BUNDLE);
    expect(lazyPackages(files)).toEqual([]);
  });

  it('serves a UI build through the bundled @fastify/static (its mime types and glob run on first use)', async () => {
    const ui = join(dir, 'ui-build');
    mkdirSync(ui);
    writeFileSync(join(ui, 'index.html'), '<!doctype html><title>bundle-ui-marker</title>');
    const out = join(dir, 'ui.json');
    const server = await startServer(CONDUCTOR, [], { ...env, CONDUCTOR_UI_DIR: ui, PROBE_OUT: out, NODE_OPTIONS: `--require ${probe}` }, dir);
    try {
      const res = await fetch(`${server.url}/ui/`);
      expect([res.status, await res.text()]).toEqual([200, '<!doctype html><title>bundle-ui-marker</title>']);
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
    const { files } = JSON.parse(readFileSync(out, 'utf8')) as Loaded;
    expect(ours(files)).toEqual([API_BUNDLE]);
    expect(fromNodeModules(files)).toEqual([]);
  });
});
