'use strict';
// Which builds are missing or older than their sources (used by `npm start` after a `git pull`).
const fs = require('node:fs');
const path = require('node:path');

/** Newest mtime (ms) of the files under `paths` (files or folders; node_modules and dist skipped). */
function newestMtime(paths) {
  let newest = 0;
  const visit = (p) => {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p)) if (name !== 'node_modules' && name !== 'dist') visit(path.join(p, name));
    } else newest = Math.max(newest, st.mtimeMs);
  };
  paths.forEach(visit);
  return newest;
}

function mtimeOf(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** The builds of `root` to redo: 'api', 'cli' and/or 'ui', each missing or older than its sources. */
function staleBuilds(root) {
  const shared = ['libs', 'tsconfig.json', 'nest-cli.json', 'package.json'].map((p) => path.join(root, p));
  const parts = [
    ['api', path.join(root, 'dist', 'apps', 'api', 'apps', 'api', 'src', 'server.js'), [path.join(root, 'apps', 'api'), ...shared]],
    ['cli', path.join(root, 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js'), [path.join(root, 'apps', 'cli'), ...shared]],
    ['ui', path.join(root, 'frontend', 'dist', 'index.html'), ['src', 'index.html', 'package.json', 'vite.config.ts'].map((p) => path.join(root, 'frontend', p))],
  ];
  return parts.filter(([, output, sources]) => {
    const built = mtimeOf(output);
    return built === undefined || newestMtime(sources) > built;
  }).map(([name]) => name);
}

module.exports = { staleBuilds, newestMtime };
