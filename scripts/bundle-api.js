'use strict';
// Bundles the built API server (dist/apps/api, from `nest build api`) into one file that a bare
// `conductor` (bin/launch.js) and `run-agent serve` (apps/cli/.../api-loader.ts) load through V8's
// code cache (docs/decisions.md, "Server start-up: one bundle"). `npm run build` runs it after bundle-cli.js.
const path = require('node:path');
const TerserPlugin = require('terser-webpack-plugin');
const webpack = require('webpack');
const { config: cliConfig, externalsOf, lazyBarrels, runWebpack } = require('./bundle-cli');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'apps', 'api');
const src = path.join(built, 'apps', 'api', 'src');
const shims = path.join(__dirname, 'api-bundle');
const BUNDLE = path.join(built, 'bundle', 'server.js');

// Kept out, loaded by Node's require: native addons; what loads on first use only (MCP SDK on the
// first /mcp request, NATS for scale-out, @fastify/static when a UI build exists); the packages
// whose internals boot/lean-load.ts defers in Node's require cache (class-validator's validator
// and libphonenumber-js, prom-client's OpenTelemetry API); NestJS's optional packages.
const EXTERNAL = new Set([
  'fs-ext',
  'file-type',
  '@modelcontextprotocol/sdk',
  '@nats-io/jetstream',
  '@nats-io/transport-node',
  '@fastify/static',
  '@opentelemetry/api',
  'class-validator',
  'class-transformer',
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@nestjs/platform-express',
  '@fastify/view',
]);
const [patchRule] = cliConfig.module.rules;

const config = {
  ...cliConfig,
  entry: path.join(shims, 'entry.js'),
  output: { ...cliConfig.output, path: path.dirname(BUNDLE), filename: path.basename(BUNDLE) },
  // Minified (the CLI's bundle strips only whitespace and comments): a server keeps its bundle's
  // source resident, and 3.1 → 2.1 MB of it idles 1.3 MB lower (docs/decisions.md). Class and
  // function names stay (NestJS keys providers by class name), and properties are never renamed.
  optimization: {
    ...cliConfig.optimization,
    minimizer: [
      new TerserPlugin({
        extractComments: false,
        terserOptions: {
          compress: { keep_classnames: true, keep_fnames: true },
          mangle: { keep_classnames: true, keep_fnames: true, properties: false },
          keep_classnames: true,
          keep_fnames: true,
          format: { comments: false, ascii_only: true },
        },
      }),
    ],
  },
  externals: externalsOf(EXTERNAL),
  module: {
    ...cliConfig.module,
    rules: [patchRule, { test: lazyBarrels('api'), loader: path.join(__dirname, 'cli-bundle', 'lazy-barrel-loader.js') }],
  },
  resolve: { alias: { API_SERVE$: path.join(src, 'boot', 'serve.js'), API_YOUNG_GEN$: path.join(src, 'boot', 'young-gen.js') } },
  plugins: [
    new webpack.NormalModuleReplacementPlugin(/[\\/]boot[\\/]lean-server(\.js)?$/, path.join(shims, 'lean-server.js')),
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
