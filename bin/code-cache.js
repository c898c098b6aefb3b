'use strict';
// Runs the CLI bundle through V8's code cache on Node versions without
// `module.enableCompileCache()` (added in 22.1): the first run compiles as usual and, when the
// process exits, stores V8's cached data; later runs deserialise it instead of parsing and
// compiling again (docs/decisions.md, "CLI start-up: one bundle").
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

/** Where cached data may be kept: beside the bundle when writable, else the user's cache folder (never a shared temp folder). */
function cacheDirs(file) {
  const home = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return [path.join(path.dirname(file), '.v8-cache'), path.join(home, 'conductor-loop', 'v8-cache')];
}

/**
 * V8 checks only the source's length and its own version and flags, so the name carries what
 * tells one build from another: the bundle's size and time, and this Node.
 */
function cacheName(file, stat) {
  return `${path.basename(file)}-${stat.size}-${Math.trunc(stat.mtimeMs)}-${process.version}-${process.arch}.bin`;
}

function readCache(dirs, name) {
  for (const dir of dirs) {
    try {
      return { data: fs.readFileSync(path.join(dir, name)), dir };
    } catch {
      // not there: try the next place
    }
  }
  return undefined;
}

/** Atomically writes `data()` (a crash leaves no half file under the real name) to the first place that takes it; returns that place. */
function writeCache(dirs, name, data) {
  for (const dir of dirs) {
    const tmp = path.join(dir, `${name}.${process.pid}.tmp`);
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(tmp, data(), { mode: 0o600 });
      fs.renameSync(tmp, path.join(dir, name));
      return dir;
    } catch {
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // no such folder: nothing was written
      }
    }
  }
  return undefined;
}

const pendingSaves = new Map();

/** Writes the code cache that requireWithCodeCache(file) would write at exit now instead (once); false when none is due. */
function saveCodeCache(file) {
  const save = pendingSaves.get(file);
  pendingSaves.delete(file);
  if (save) save();
  return !!save;
}

/**
 * The file inside Node's module wrapper, as one string decoded from one buffer (the file is ASCII:
 * scripts/bundle-cli.js checks; a one-byte string decodes in half the time of UTF-8). V8 compiles
 * and keeps this string as it is, outside its heap; `Module.wrap(text)` made a second, flattened
 * copy on the heap and left the first as garbage.
 */
function readWrapped(file) {
  const [head, tail] = Module.wrapper;
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const text = Buffer.allocUnsafeSlow(head.length + size + tail.length);
    text.write(head, 0, 'latin1');
    if (fs.readSync(fd, text, head.length, size, 0) !== size) throw new Error(`${file} changed while it was read`);
    text.write(tail, head.length + size, 'latin1');
    return text.toString('latin1');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Compiles `file`, from the cached data in `dirs` when there is one: where that data was found and
 * whether V8 took it. The data's bytes go no further than this frame, so they are freed while the
 * file runs, not kept until a full GC (2 MB of an idle server's memory).
 */
function compile(file, dirs, name) {
  const cached = readCache(dirs, name);
  const script = new vm.Script(readWrapped(file), { filename: file, cachedData: cached?.data });
  return { script, cacheDir: cached?.dir, usable: !!cached && !script.cachedDataRejected };
}

/**
 * `require(file)` for an ASCII CommonJS file, compiled from V8's cached data when a valid one exists.
 * V8 caches only the functions a run compiled, so each `variant` (the launcher passes the command
 * word) adds its own once: a run of a variant not yet marked rewrites the cache with everything
 * compiled so far, the cached functions included, and marks it.
 */
function requireWithCodeCache(file, variant = 'default') {
  const dirs = cacheDirs(file);
  const name = cacheName(file, fs.statSync(file));
  const { script, cacheDir, usable } = compile(file, dirs, name);
  const marker = (dir) => path.join(dir, `${name}.${variant}`);
  if (!usable || !fs.existsSync(marker(cacheDir))) {
    let saved = false;
    const save = () => {
      if (saved) return;
      saved = true;
      // after the command ran, so the data covers the functions it compiled, not only the top level;
      // when many processes start at once after a build, the first to finish writes it
      if (!cacheDir && dirs.some((dir) => fs.existsSync(path.join(dir, name)))) return;
      const dir = writeCache(cacheDir ? [cacheDir] : dirs, name, () => script.createCachedData());
      try {
        if (dir) fs.writeFileSync(marker(dir), '', { mode: 0o600 });
      } catch {
        // unmarked: a later run of this variant writes again
      }
    };
    process.once('exit', save);
    // a server, which may never exit cleanly, saves once it is ready (saveCodeCache)
    pendingSaves.set(file, save);
  }
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  require.cache[file] = mod;
  script.runInThisContext({ displayErrors: true }).call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  return mod.exports;
}

module.exports = { requireWithCodeCache, saveCodeCache, cacheDirs, cacheName };
