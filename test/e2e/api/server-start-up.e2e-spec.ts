import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What the server loads at start-up (libs/boot/src/lean-load.ts): rxjs from its bundle,
// class-validator's string validators and phone metadata deferred until used — with validation
// unchanged. Runs the built server in a fresh node, where the require cache is Node's own: the
// tsc build and the bundle the executables load (scripts/bundle-api.js, its lean-load shim).
const repoRoot = join(__dirname, '..', '..', '..');
const tscBuild = join(repoRoot, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js');
const bundle = join(repoRoot, 'dist', 'apps', 'api', 'bundle', 'server.js');

describe.each([
  ['tsc build', tscBuild],
  ['bundle', bundle],
])('server start-up: deferred modules (%s)', (_build, serverJs) => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(serverJs)) throw new Error(`API not built: run \`npm run build:api\` (missing ${serverJs})`);
  });
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'srv-start-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('starts without compiling validator/libphonenumber/rxjs CJS files, validates as before, and loads a validator on use', () => {
    const root = join(dir, 'runs');
    mkdirSync(join(root, 'proj'), { recursive: true });
    const script = `
      const Module = require('node:module');
      const compiled = [];
      const compile = Module.prototype._compile;
      Module.prototype._compile = function (code, file) { compiled.push(file); return compile.call(this, code, file); };
      const count = (re) => compiled.filter((f) => re.test(f)).length;
      require(${JSON.stringify(serverJs)}).startServer({ root: ${JSON.stringify(root)}, host: '127.0.0.1', port: 0, portExplicit: true, defaultMetrics: false })
        .then(async ({ app, url }) => {
          const post = (body) => fetch(url + '/api/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
          const bad = await post({ project_id: 'proj', body: 5 });
          const good = await post({ project_id: 'proj', body: 'hello' });
          const atStart = { validator: count(/node_modules\\/validator\\//), phone: count(/node_modules\\/libphonenumber-js\\//), rxjsCjs: count(/node_modules\\/rxjs\\/dist\\/cjs\\//) };
          const cv = require(require.resolve('class-validator', { paths: [${JSON.stringify(repoRoot)}] }));
          const onUse = [cv.isEmail('a@example.com'), cv.isEmail('nope'), cv.isPhoneNumber('+14155552671'), count(/node_modules\\/validator\\/lib\\/isEmail\\.js$/)];
          await app.close();
          process.stderr.write('PROBE ' + JSON.stringify({ bad: bad.status, good: good.status, atStart, onUse }));
        });`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: dir } });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stderr.slice(r.stderr.lastIndexOf('PROBE ') + 6)) as Record<string, unknown>;
    expect(out).toEqual({ bad: 400, good: 201, atStart: { validator: 0, phone: 0, rxjsCjs: 0 }, onUse: [true, false, true, 1] });
  });

  it('loads the MCP SDK, the OpenTelemetry API and @fastify/static only when used', () => {
    const root = join(dir, 'runs');
    mkdirSync(join(root, 'proj'), { recursive: true });
    const script = `
      const Module = require('node:module');
      const compiled = [];
      const compile = Module.prototype._compile;
      Module.prototype._compile = function (code, file) { compiled.push(file); return compile.call(this, code, file); };
      const count = (re) => compiled.filter((f) => re.test(f)).length;
      require(${JSON.stringify(serverJs)}).startServer({ root: ${JSON.stringify(root)}, host: '127.0.0.1', port: 0, portExplicit: true, defaultMetrics: true, uiDir: ${JSON.stringify(join(dir, 'no-ui'))} })
        .then(async ({ app, url }) => {
          const atStart = { mcp: count(/@modelcontextprotocol\\/sdk\\//), zod: count(/node_modules\\/zod\\//), otel: count(/@opentelemetry\\/api\\//), fastifyStatic: count(/@fastify\\/static\\//) };
          const metrics = await (await fetch(url + '/metrics')).text();
          const init = await fetch(url + '/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
          const initText = await init.text();
          const onUse = { mcp: count(/@modelcontextprotocol\\/sdk\\//) > 0, mcpStatus: init.status, serverInfo: initText.includes('serverInfo'), cpuMetric: metrics.includes('process_cpu_seconds_total') };
          await app.close();
          process.stderr.write('PROBE ' + JSON.stringify({ atStart, onUse }));
        });`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, HOME: dir } });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stderr.slice(r.stderr.lastIndexOf('PROBE ') + 6)) as Record<string, unknown>;
    expect(out).toEqual({
      atStart: { mcp: 0, zod: 0, otel: 0, fastifyStatic: 0 },
      onUse: { mcp: true, mcpStatus: 200, serverInfo: true, cpuMetric: true },
    });
  });
});
