'use strict';
// Bundles the built API server (dist/apps/api, from `nest build api`) into one file that a bare
// `conductor` (bin/launch.js) and `run-agent serve` (apps/cli/.../api-loader.ts) load through Node's
// compile cache (docs/decisions.md, "Server start-up: one bundle"). `npm run build` runs it after bundle-cli.js.
const path = require('node:path');
const webpack = require('webpack');
const { config: cliConfig, assertSameCopy, externalsOf, lazyBarrels, lazyRequire, runWebpack } = require('./bundle-cli');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'apps', 'api');
const src = path.join(built, 'apps', 'api', 'src');
const shims = path.join(__dirname, 'api-bundle');
const BUNDLE = path.join(built, 'bundle', 'server.js');

// Kept out, loaded by Node's require: native addons; what loads on first use only, so an idle
// server does not keep its source (MCP SDK and zod on the first /mcp request, NATS for scale-out,
// Fastify's schema compilers for a route with a schema (apps/api/src/boot/schema-compilers.ts), its
// logger and inject(), glob (api-bundle/glob.js)); NestJS's optional packages.
const EXTERNAL = new Set([
  'fs-ext',
  'file-type',
  '@modelcontextprotocol/sdk',
  'zod',
  '@nats-io/jetstream',
  '@nats-io/transport-node',
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'pino',
  'light-my-request',
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@nestjs/platform-express',
  '@fastify/view',
]);
// Kept out too, but required by bundled code at load time: each such require gets a stand-in that
// loads the module on first use (cli-bundle/lazy-require.js). Built-ins an idle server never uses
// (not child_process: net's listen() loads it through cluster); class-validator's string
// validators (compiled ES modules) and phone-number metadata; prom-client's OpenTelemetry API,
// read only for exemplars, which the server does not enable.
const LAZY = /^(?:node:)?(http2|https|dns)$|^(validator(?:\/.*)?)$|^(libphonenumber-js\/max|@opentelemetry\/api)$/;
// Bundled, but run on first use (api-bundle/defer-loader.js): packages that code run at start-up
// requires at load time and an idle server never calls (YAML for config and task files, mime
// types for a served file).
const DEFERRED = /^(yaml|mime)$/;
function lazyQuery(request) {
  const [, builtin, esModule, other] = LAZY.exec(request);
  if (builtin) return `node:${builtin}`;
  return esModule ? `esm:${esModule}` : other;
}

const config = {
  ...cliConfig,
  entry: path.join(shims, 'entry.js'),
  output: { ...cliConfig.output, path: path.dirname(BUNDLE), filename: path.basename(BUNDLE) },
  // minified as the CLI's bundle: a server keeps its bundle's source resident, and 3.1 → 2.1 MB
  // of it idles 1.3 MB lower (docs/decisions/startup-server-history.md)
  optimization: cliConfig.optimization,
  externals: externalsOf(EXTERNAL, path.dirname(BUNDLE)),
  module: {
    ...cliConfig.module,
    rules: [{ test: lazyBarrels('api'), loader: path.join(__dirname, 'cli-bundle', 'lazy-barrel-loader.js') }],
  },
  // glob: a stand-in that loads the package on first use (api-bundle/glob.js)
  resolve: { alias: { API_SERVE$: path.join(src, 'boot', 'serve.js'), glob$: path.join(shims, 'glob.js') } },
  plugins: [
    new webpack.NormalModuleReplacementPlugin(/[\\/]boot[\\/]lean-server(\.js)?$/, path.join(shims, 'lean-server.js')),
    lazyRequire(LAZY, (request, context) => {
      const query = lazyQuery(request);
      if (!query.startsWith('node:')) assertSameCopy(query.replace(/^esm:/, ''), context, path.dirname(BUNDLE));
      return query;
    }),
    new webpack.NormalModuleReplacementPlugin(DEFERRED, (data) => {
      data.request = `${path.join(shims, 'defer-loader.js')}!${require.resolve(data.request, { paths: [data.context] })}`;
    }),
    new webpack.optimize.LimitChunkCountPlugin({ maxChunks: 1 }),
  ],
};

const bundle = () => runWebpack(config, BUNDLE);

if (require.main === module) {
  bundle().then(
    () => console.log(`bundled the API server into ${path.relative(root, BUNDLE)}`),
    (err) => {
      console.error(`bundle-api: ${err.message}`);
      process.exit(1);
    },
  );
}

module.exports = { bundle, config, BUNDLE };
