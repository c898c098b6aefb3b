'use strict';
// Bundles the built CLI (dist/apps/cli, from `nest build cli`) into one file that bin/run-agent
// and bin/conductor run (docs/decisions.md, "CLI start-up: one bundle"). `npm run build` runs it.
const fs = require('node:fs');
const path = require('node:path');
const TerserPlugin = require('terser-webpack-plugin');
const webpack = require('webpack');

const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'apps', 'cli');
const shims = path.join(__dirname, 'cli-bundle');
const BUNDLE = path.join(built, 'bundle', 'run-agent.js');

// Packages kept out of the bundle, loaded by Node's require when a command uses them: native
// addons, what only cold commands load (mcp, scale-out workers, NestJS's file-type validator,
// nest-commander's fig completion with prettier), and NestJS's optional packages (required
// inside try/catch; not installed, or only the server's) except the two replaced by absent.js.
const EXTERNAL = new Set([
  'fs-ext',
  'file-type',
  '@modelcontextprotocol/sdk',
  '@nats-io/jetstream',
  '@nats-io/transport-node',
  '@fig/complete-commander',
  '@nestjs/platform-express',
  'class-validator',
  'class-transformer',
]);
// Built-ins that bundled code requires at load time and `run-agent task` does not use before its
// agent runs: each gets a stand-in that Node's require replaces on first use (lazyRequire below).
// node:crypto (webhook signatures, completion hashes) alone costs ~3 ms to load; NestJS's
// exception filter requires node:http; node:fs/promises brings readline with it.
const LAZY = /^(?:node:)?(crypto|https?|net|fs\/promises)$/;
/**
 * Replaces the requests `pattern` matches by a stand-in (cli-bundle/lazy-require.js) that loads,
 * on first use, what `queryOf(request, context)` names: `node:<builtin>`, `esm:<file>` (a compiled
 * ES module) or a package. Rewritten where webpack's externals read the request too (the dependency).
 */
const lazyRequire = (pattern, queryOf) =>
  new webpack.NormalModuleReplacementPlugin(pattern, (data) => {
    const request = `${path.join(shims, 'lazy-require.js')}?${queryOf(data.request, data.context)}`;
    data.request = request;
    for (const dependency of data.dependencies) dependency.request = request;
  });
/** The barrels (index.js) whose re-exports the lazy-barrel loader defers: the app's own libs only (no third-party source is rewritten). */
const lazyBarrels = (app) => new RegExp(`[\\\\/]dist[\\\\/]apps[\\\\/]${app}[\\\\/]libs[\\\\/].*[\\\\/]index\\.js$`);
const packageOf = (request) => request.split('/').slice(0, request.startsWith('@') ? 2 : 1).join('/');
const resolvedFrom = (request, dir) => {
  try {
    return require.resolve(request, { paths: [dir] });
  } catch {
    return undefined; // an optional package that is not installed
  }
};
/**
 * Throws when Node's require in `bundleDir` would find another copy of `request` than the file in
 * `context` that requires it (a nested node_modules): a module left out of a bundle is loaded from there.
 */
function assertSameCopy(request, context, bundleDir) {
  const own = resolvedFrom(request, context);
  if (own && own !== resolvedFrom(request, bundleDir)) throw new Error(`${request}, required from ${context}, resolves to another copy from ${bundleDir}; bundle it instead`);
}
/** webpack externals: the packages of `names` stay out of the bundle and load through Node's require in `bundleDir`. */
const externalsOf = (names, bundleDir) => [
  ({ context, request }, callback) => {
    if (!names.has(packageOf(request))) return callback();
    try {
      assertSameCopy(request, context, bundleDir);
    } catch (err) {
      return callback(err);
    }
    return callback(null, `commonjs ${request}`);
  },
];

const config = {
  mode: 'production',
  target: 'node22',
  context: root,
  entry: path.join(shims, 'entry.js'),
  // always written (compareBeforeEmit: false): bin/launch.js runs the bundle only when it is newer than main.js
  // strictModuleExceptionHandling: a module that throws (absent.js) is not cached, so each require throws again
  output: { path: path.dirname(BUNDLE), filename: path.basename(BUNDLE), library: { type: 'commonjs2' }, clean: true, compareBeforeEmit: false, strictModuleExceptionHandling: true },
  devtool: false,
  // __dirname/__filename stay Node's: the bundle lives inside the package (version.ts, bin-dir.ts walk up from it)
  node: { __dirname: false, __filename: false, global: false },
  optimization: {
    nodeEnv: false,
    splitChunks: false,
    // minified: every command reads and compiles the whole file, and 2.6 → 1.8 MB of it starts
    // `status` ~6 % sooner (docs/decisions/startup-and-memory.md). Class and function names stay
    // (NestJS keys providers by class name), properties are never renamed, and the output is
    // ASCII (assertAscii). The API bundle (scripts/bundle-api.js) takes the same settings.
    minimize: true,
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
  externals: externalsOf(EXTERNAL, path.dirname(BUNDLE)),
  module: {
    rules: [
      // re-exporting index files of our libs load what they name on first use (no third-party file is rewritten)
      { test: lazyBarrels('cli'), loader: path.join(shims, 'lazy-barrel-loader.js') },
    ],
    parser: {
      // `require(variable)` in NestJS and cosmiconfig loads optional packages: at run time it finds
      // nothing in the bundle, as if the package were not installed (what NestJS expects of them).
      // In our own code it is an error (see bundle()): use createRequire(__filename) there.
      javascript: { exprContextRegExp: /^$/ },
    },
  },
  ignoreWarnings: [{ module: /[\\/]node_modules[\\/]/ }],
  resolve: { alias: { CLI_MAIN$: path.join(built, 'apps', 'cli', 'src', 'main.js'), inquirer$: path.join(shims, 'inquirer.js'), cosmiconfig$: path.join(shims, 'cosmiconfig.js') } },
  plugins: [
    new webpack.NormalModuleReplacementPlugin(/[\\/]boot[\\/]lean-nest(\.js)?$/, path.join(shims, 'no-boot.js')),
    lazyRequire(LAZY, (request) => `node:${LAZY.exec(request)[1]}`),
    // NestJS's optional microservices/websockets packages: absent, without a node_modules search at run time
    new webpack.NormalModuleReplacementPlugin(/^@nestjs\/(microservices|websockets)(\/.*)?$/, path.join(shims, 'absent.js')),
    // cli.module.ts requires the engine's command files by name: only those, not their .map files
    new webpack.ContextReplacementPlugin(/[\\/]commands[\\/]engine$/, false, /^\.\/[^/]+(?<!\.map)$/),
    new webpack.optimize.LimitChunkCountPlugin({ maxChunks: 1 }),
  ],
  performance: { hints: false },
  stats: 'errors-warnings',
};

/** Plain ASCII (terser's ascii_only): V8 keeps a one-byte source string, half the size of a two-byte one. */
function assertAscii(file) {
  const at = fs.readFileSync(file).findIndex((b) => b > 0x7f);
  if (at >= 0) throw new Error(`${file}: byte ${at} is not ASCII; terser's ascii_only should have escaped it`);
}

/** Runs webpack with `cfg`; resolves with its stats once `file` is written and checked. */
function runWebpack(cfg, file) {
  return new Promise((resolve, reject) => {
    webpack(cfg, (err, stats) => {
      if (err) return reject(err);
      if (stats.hasErrors()) return reject(new Error(stats.toString('errors-only')));
      // a warning about our own code (e.g. `require(variable)`, which the bundle cannot serve) fails the build
      if (stats.hasWarnings()) return reject(new Error(stats.toString('errors-warnings')));
      try {
        assertAscii(file);
      } catch (e) {
        return reject(e);
      }
      resolve(stats);
    });
  });
}

const bundle = () => runWebpack(config, BUNDLE);

if (require.main === module) {
  bundle().then(
    () => {
      console.log(`bundled the CLI into ${path.relative(root, BUNDLE)}`);
    },
    (err) => {
      console.error(`bundle-cli: ${err.message}`);
      process.exit(1);
    },
  );
}

module.exports = { bundle, config, BUNDLE, assertAscii, assertSameCopy, runWebpack, externalsOf, lazyBarrels, lazyRequire };
