'use strict';
// Shared launcher of bin/run-agent and bin/conductor: runs the built CLI, from its one-file bundle
// when that is current (docs/decisions.md, "CLI start-up: one bundle"); `conductor`, `conductor
// [serve] --flags` and `run-agent serve --flags` run the API bundle's serve entry alone
// (docs/decisions.md, "Server start-up: the API bundle boots a bare conductor").
const path = require('node:path');
const fs = require('node:fs');
const nodeModule = require('node:module');

const DIST = path.join(__dirname, '..', 'dist', 'apps', 'cli');
const ENTRY = path.join(DIST, 'apps', 'cli', 'src', 'main.js');
const BUNDLE = path.join(DIST, 'bundle', 'run-agent.js');
// the API's serve entry and its bundle (apps/cli/src/commands/server/serve/api-loader.ts: the same paths and rule)
const API_DIST = path.join(__dirname, '..', 'dist', 'apps', 'api');
const API_ENTRY = path.join(API_DIST, 'apps', 'api', 'src', 'boot', 'serve.js');
const API_BUNDLE = path.join(API_DIST, 'bundle', 'server.js');
// the serve flags, defined once (libs/boot/src/serve-flags.ts; a plain module, node:util only)
const API_FLAGS = path.join(API_DIST, 'libs', 'boot', 'src', 'serve-flags.js');

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

/** The CLI's exports from `entry`: a task's, job's or the supervisor's bundle with its own code cache (bin/bundle-loader.js), else as it is. */
function loadCli(entry, command) {
  if (entry !== BUNDLE) return require(entry);
  const loader = require('./bundle-loader');
  return loader.cachesRunsOf(command) ? loader.loadBundle(BUNDLE, command) : require(BUNDLE);
}

/** The API bundle when a bare `conductor` may run it directly: current (as api-loader.ts decides) and not declined. */
function apiBundleForServe() {
  if (process.env.CONDUCTOR_API_UNBUNDLED) return undefined;
  const entryTime = mtime(API_ENTRY);
  const bundleTime = mtime(API_BUNDLE);
  return entryTime !== undefined && bundleTime !== undefined && bundleTime >= entryTime ? API_BUNDLE : undefined;
}

/**
 * The serve flags when `args` start the server and the API bundle may run it (else undefined: the
 * CLI runs the command, and commander reports usage errors and `--help` in its words).
 */
function serveFlags(programName, args) {
  if (args[0] !== 'serve' && programName !== 'conductor') return undefined;
  if (!apiBundleForServe()) return undefined;
  // nothing to parse: a bare `conductor` loads only the bundle (the flags module costs ~2 ms)
  if (programName === 'conductor' && args.length === 0) return {};
  if (mtime(API_FLAGS) === undefined) return undefined;
  return require(API_FLAGS).serveFlagsFromArgv(programName, args);
}

/** The server from the API bundle, without loading the CLI (the same serveMain the CLI calls). */
function serve(programName, bundle, flags) {
  return require(bundle).serveMain(programName, flags);
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
  // Node's compile cache (V8's code cache of every module loaded, kept across runs) before any of the CLI loads
  if (!process.env.NODE_DISABLE_COMPILE_CACHE) {
    try {
      nodeModule.enableCompileCache();
    } catch {
      // an optimisation only: an unwritable cache directory must not stop the CLI
    }
  }
  const flags = serveFlags(programName, process.argv.slice(2));
  if (flags) {
    // a failure to load the bundle too is one `Error:` line
    Promise.resolve().then(() => serve(programName, API_BUNDLE, flags)).catch(reportFailure);
    return;
  }
  const entryTime = mtime(ENTRY);
  if (entryTime === undefined) {
    process.stderr.write(`${programName}: the CLI is not built (missing ${ENTRY}); run \`npm ci && npm run build\` in ${path.join(__dirname, '..')}\n`);
    process.exit(1);
  }
  const args = process.argv.slice(2);
  const wantsHelp = args.includes('--help') || args.includes('-h');
  // `conductor task …` is the API client: not the code a `run-agent task` runs
  const command = programName === 'run-agent' && !wantsHelp ? args[0] : undefined;
  const runHere = () => loadCli(cliEntry(entryTime), command).main(args, programName);
  if (programName === 'run-agent' && (args[0] === 'task' || args[0] === 'job') && process.env.RUN_AGENT_SUPERVISOR && !wantsHelp) {
    // the loop or run goes on in the host's task supervisor; help and usage errors come back here (bin/task-client.js)
    require('./task-client')
      .runSupervised(args, cliEntry(entryTime))
      .then((handled) => handled || runHere())
      .catch(reportFailure);
    return;
  }
  runHere().catch(reportFailure);
};

/** The host's task supervisor on `socketPath` (bin/task-supervisor.js, started by bin/task-client.js). */
module.exports.supervise = function supervise(socketPath) {
  if (!process.env.NODE_DISABLE_COMPILE_CACHE) {
    try {
      nodeModule.enableCompileCache();
    } catch {
      // as in launch()
    }
  }
  loadCli(cliEntry(mtime(ENTRY)), 'supervisor').superviseTasks(socketPath).catch(reportFailure);
};

function reportFailure(err) {
  process.stderr.write(`Error: ${err && err.message ? err.message : String(err)}\n`);
  process.exitCode = (err && err.exitCode) || 1;
}

module.exports.BUNDLE = BUNDLE;
module.exports.ENTRY = ENTRY;
module.exports.API_BUNDLE = API_BUNDLE;
