'use strict';
// Loads the CLI bundle with a V8 code cache that holds the functions a command ran, not only the
// ones compiled up front (docs/decisions/startup-and-memory.md, "The bundle's code cache after the
// run"). Node's compile cache is made right after compiling the bundle, before any of its lazily
// compiled functions (the webpack modules and everything in them) exist, so every run compiled
// those again: ~30 ms of a `run-agent task`'s CPU. vm.Script's createCachedData() after the run
// includes them (a documented property of the API).
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const nodeModule = require('node:module');
const fnv1a64 = require('./fnv1a64');

// The start of a task or job (the hot path of fan-out and capacity), the task supervisor, and the
// hot read commands: the first run of each writes its own cache. Other commands keep Node's compile
// cache alone: a cache holds what its first run compiled, and V8 deserialises all of it on every
// start, so one shared by commands that run different code (a `--help` on the Nest path, then
// `--version`) costs more than it saves; `bus` and `--version` gained nothing measurable.
const CACHED_COMMANDS = new Set(['task', 'job', 'supervisor', 'status', 'list', 'output']);

/** Whether `command`'s runs load the bundle here (else through require, with Node's compile cache). */
module.exports.cachesRunsOf = (command) => CACHED_COMMANDS.has(command);

/** The names of the caches of `bundle`'s install for `command`: `<prefix><build>-<command>.v8cache`. */
const cacheNames = (bundle, command) => ({ prefix: `run-agent-bundle-${fnv1a64(bundle)}-`, suffix: `-${command}.v8cache` });

/**
 * The cache file of `bundle` for runs of `command`: in Node's compile cache folder, which is
 * already per Node version, architecture and V8 flags (V8 refuses a cache made under others).
 * V8 checks only the source's length, so the name carries the bundle's size, mtime and inode:
 * a rebuilt bundle never meets a cache of its predecessor. The bundle's path tells installs apart.
 */
function cacheFileFor(bundle, command) {
  const dir = nodeModule.getCompileCacheDir?.();
  if (!dir) return undefined;
  const st = fs.statSync(bundle, { bigint: true });
  const { prefix, suffix } = cacheNames(bundle, command);
  return path.join(dir, `${prefix}${st.size}-${st.mtimeNs}-${st.ino}${suffix}`);
}

/** Removes this install's caches of `command` made for earlier builds: nothing reads them again. */
function removeEarlierBuilds(cacheFile, bundle, command) {
  const { prefix, suffix } = cacheNames(bundle, command);
  const dir = path.dirname(cacheFile);
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith(prefix) && name.endsWith(suffix) && name !== path.basename(cacheFile)) fs.rmSync(path.join(dir, name), { force: true });
  }
}

/**
 * The cache's bytes when the file is ours and only we may change it, else undefined: Node's
 * compile cache folder is under the shared temporary folder by default, and V8 must never
 * deserialise code another user could have written.
 */
function readOwnCache(cacheFile) {
  let fd;
  try {
    fd = fs.openSync(cacheFile, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return undefined; // first run of this command on this bundle
  }
  try {
    const st = fs.fstatSync(fd);
    return st.isFile() && st.uid === process.getuid() && (st.mode & 0o022) === 0 ? fs.readFileSync(fd) : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes the cache at exit, after a run that succeeded (a usage error's run, on the Nest path,
 * compiled other code); a failure, crash or signal leaves none and the next run writes it.
 */
function writeAtExit(script, cacheFile, bundle, command) {
  process.once('exit', (code) => {
    if (code !== 0) return;
    const temp = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 }); // as Node's own cache files
      fs.renameSync(temp, cacheFile); // atomic: concurrent first runs each write a whole file
      removeEarlierBuilds(cacheFile, bundle, command);
    } catch {
      fs.rmSync(temp, { force: true });
    }
  });
}

/**
 * The exports of the CommonJS `bundle`, evaluated as Node's loader would (same require, module,
 * __filename, __dirname and line numbers), with the code cache of `command`'s runs when Node's
 * compile cache is on; otherwise Node's own require.
 */
module.exports.loadBundle = function loadBundle(bundle, command) {
  const cacheFile = cacheFileFor(bundle, command);
  if (!cacheFile) return require(bundle);
  const cachedData = readOwnCache(cacheFile);
  // one read and decode (a Buffer's toString) is faster than Node's readFileUtf8 of 2.6 MB here
  const source = fs.readFileSync(bundle).toString();
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {\n${source}\n})`, {
    filename: bundle,
    lineOffset: -1,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (!cachedData || script.cachedDataRejected) writeAtExit(script, cacheFile, bundle, command);
  const mod = { exports: {}, filename: bundle, id: bundle, loaded: false };
  script.runInThisContext()(mod.exports, nodeModule.createRequire(bundle), mod, bundle, path.dirname(bundle));
  mod.loaded = true;
  return mod.exports;
};
