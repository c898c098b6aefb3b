'use strict';
// `npm start` on a Node older than the supported lines: rather than stopping, it fetches Node 22
// from the npm registry's node-<os>-<arch> package (the binary and the headers fs-ext builds
// against; the same way .ci/run gets its Node lines), keeps it in a per-user cache and runs again
// under it. CONDUCTOR_NODE names a supported node binary to use instead; CONDUCTOR_NODE_DOWNLOAD=0
// turns the download off (then `npm start` says which Node it needs and exits 2).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const LINE = '22';

function cacheDir() {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'conductor-loop', `node-${LINE}`);
}

/** A supported Node: `{ bin, home }` (home: the package folder with include/ for node-gyp), or undefined. */
function supportedNode(log) {
  if (process.env.CONDUCTOR_NODE) return { bin: process.env.CONDUCTOR_NODE, home: path.dirname(path.dirname(process.env.CONDUCTOR_NODE)) };
  if (process.env.CONDUCTOR_NODE_DOWNLOAD === '0') return undefined;
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = cacheDir();
  const home = path.join(dir, 'node_modules', pkg);
  const bin = path.join(home, 'bin', 'node');
  if (!fs.existsSync(bin)) {
    log(`downloading Node ${LINE} from the npm registry (${pkg}@${LINE}) into ${dir}`);
    const r = spawnSync('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@${LINE}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0 || !fs.existsSync(bin)) return undefined;
  }
  return { bin, home };
}

module.exports = { supportedNode };
