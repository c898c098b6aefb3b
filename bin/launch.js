'use strict';
// Shared launcher of bin/run-agent and bin/conductor: runs the built CLI, from its one-file bundle
// when that is current (docs/decisions.md, "CLI start-up: one bundle"); a bare `conductor` runs
// the API bundle's serve entry alone (docs/decisions.md, "Server start-up: the API bundle boots a
// bare conductor").
const path = require('node:path');
const fs = require('node:fs');
const nodeModule = require('node:module');
const { setImmediate } = require('node:timers');

const DIST = path.join(__dirname, '..', 'dist', 'apps', 'cli');
const ENTRY = path.join(DIST, 'apps', 'cli', 'src', 'main.js');
const BUNDLE = path.join(DIST, 'bundle', 'run-agent.js');
// the API's serve entry and its bundle (apps/cli/src/commands/server/serve/api-loader.ts: the same paths and rule)
const API_DIST = path.join(__dirname, '..', 'dist', 'apps', 'api');
const API_ENTRY = path.join(API_DIST, 'apps', 'api', 'src', 'boot', 'serve.js');
const API_BUNDLE = path.join(API_DIST, 'bundle', 'server.js');

const mtime = (file) => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs;

/**
 * The bundle (scripts/bundle-cli.js, run by `npm run build`) when it was made from the current
 * `nest build cli` output; after a bare `nest build cli` the newer unbundled build runs instead.
 */
function cliEntry(entryTime) {
  if (process.env.CONDUCTOR_CLI_UNBUNDLED) return ENTRY;
  const bundleTime = mtime(BUNDLE);
  return bundleTime !== undefined && bundleTime >= entryTime ? BUNDLE : ENTRY;
}

/** The API bundle when a bare `conductor` may run it directly: current (as api-loader.ts decides) and not declined. */
function apiBundleForServe() {
  if (process.env.CONDUCTOR_API_UNBUNDLED) return undefined;
  const entryTime = mtime(API_ENTRY);
  const bundleTime = mtime(API_BUNDLE);
  return entryTime !== undefined && bundleTime !== undefined && bundleTime >= entryTime ? API_BUNDLE : undefined;
}

/** A bare `conductor`: the server from the API bundle, without loading the CLI (the same serveMain the CLI calls). */
function serve(programName, bundle) {
  let onListening;
  let api;
  if (typeof nodeModule.enableCompileCache === 'function' || process.env.NODE_DISABLE_COMPILE_CACHE) {
    api = require(bundle);
  } else {
    const cache = require('./code-cache');
    api = cache.requireWithCodeCache(bundle, 'serve');
    // a server may never exit cleanly: save V8's cached data once it listens
    onListening = () => setImmediate(() => cache.saveCodeCache(bundle));
  }
  return api.serveMain(programName, { onListening });
}

function load(file) {
  if (file !== BUNDLE) return require(file);
  // V8 compile cache: Node's own (>= 22.1, switched on below) or, on older Node, bin/code-cache.js
  if (typeof nodeModule.enableCompileCache === 'function' || process.env.NODE_DISABLE_COMPILE_CACHE) return require(file);
  // the command (up to two words: `bus read`, `status`) names the part of the cache it adds to (bin/code-cache.js)
  const words = [];
  for (const arg of process.argv.slice(2, 4)) {
    if (!/^[a-z][a-z-]{0,30}$/.test(arg)) break;
    words.push(arg);
  }
  return require('./code-cache').requireWithCodeCache(file, words.join('-') || 'other');
}

/**
 * Once the event loop is empty the command has finished all its work (nothing is pending, or Node
 * would not emit 'beforeExit'): exit now, with the exit code already set, instead of letting Node
 * tear down V8's heap first (~5 ms at the end of every command, docs/decisions.md). Only when no
 * other 'beforeExit' listener could still schedule work.
 */
function exitWhenIdle() {
  if (process.listenerCount('beforeExit') === 1) process.exit();
}

module.exports = function launch(programName) {
  process.on('beforeExit', exitWhenIdle);
  // V8 compile cache (Node >= 22.1) before any of the CLI is loaded; Node 20 has no such function.
  if (typeof nodeModule.enableCompileCache === 'function' && !process.env.NODE_DISABLE_COMPILE_CACHE) {
    try {
      nodeModule.enableCompileCache();
    } catch {
      // an optimisation only: an unwritable cache directory must not stop the CLI
    }
  }
  const apiBundle = programName === 'conductor' && process.argv.length === 2 ? apiBundleForServe() : undefined;
  if (apiBundle) {
    // a failure to load the bundle too is one `Error:` line
    Promise.resolve().then(() => serve(programName, apiBundle)).catch(reportFailure);
    return;
  }
  const entryTime = mtime(ENTRY);
  if (entryTime === undefined) {
    process.stderr.write(`${programName}: the CLI is not built (missing ${ENTRY}); run \`npm ci && npm run build\` in ${path.join(__dirname, '..')}\n`);
    process.exit(1);
  }
  load(cliEntry(entryTime)).main(process.argv.slice(2), programName).catch(reportFailure);
};

function reportFailure(err) {
  process.stderr.write(`Error: ${err && err.message ? err.message : String(err)}\n`);
  process.exitCode = 1;
}

module.exports.BUNDLE = BUNDLE;
module.exports.ENTRY = ENTRY;
module.exports.API_BUNDLE = API_BUNDLE;
