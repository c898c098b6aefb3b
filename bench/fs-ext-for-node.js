'use strict';
// fs-ext (the native flock binding) for another Node line than the one node_modules was built for
// (#32: the CLI figures on Node 22 and 24): a copy in a temp folder, built by node-gyp against that
// Node's own headers, and a preload that resolves `fs-ext` to the copy. The checkout's node_modules
// are left as they are: another process may be using them, so no in-place `npm rebuild`.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

/** node-gyp's entry: npm's (set under `npm run`), the project's, else the one bundled with the npm on PATH. */
function nodeGyp(root) {
  const fromNpmOnPath = (process.env.PATH || '').split(path.delimiter).map((dir) => path.join(dir, 'npm')).filter((f) => fs.existsSync(f))
    .map((npm) => path.join(path.dirname(fs.realpathSync(npm)), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  let local;
  try {
    local = require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] });
  } catch {
    // not a dependency of the project
  }
  const found = [process.env.npm_config_node_gyp, local, ...fromNpmOnPath].find((f) => f && fs.existsSync(f));
  if (!found) throw new Error('node-gyp not found (neither in node_modules nor with the npm on PATH)');
  return found;
}

/**
 * Node arguments (`--require <preload>`) under which `node` loads an fs-ext built for it in a
 * folder of `ctx.tmpDir`; throws an Error with a one-line reason when it cannot be built.
 */
function fsExtFor(ctx, node) {
  const real = fs.realpathSync(node);
  const hooks = spawnSync(real, ['-p', 'typeof require("node:module").registerHooks'], { encoding: 'utf8' }).stdout.trim();
  if (hooks !== 'function') throw new Error('this Node has no module.registerHooks (22.15+, 23.5+) for the fs-ext preload');
  // bin/node → the installation folder, whose include/node has the headers: nothing is downloaded
  const nodeDir = path.dirname(path.dirname(real));
  if (!fs.existsSync(path.join(nodeDir, 'include', 'node', 'common.gypi'))) throw new Error(`no Node headers in ${nodeDir}/include/node to build fs-ext`);
  const gyp = nodeGyp(ctx.root);
  const src = path.dirname(require.resolve('fs-ext/package.json', { paths: [ctx.root] }));
  const modules = path.join(ctx.tmpDir('fs-ext-'), 'node_modules');
  const copy = path.join(modules, 'fs-ext');
  fs.cpSync(src, copy, { recursive: true, filter: (f) => f !== path.join(src, 'build') });
  // its binding.gyp asks `node -e "require('nan')"`, run in the copy, for nan's headers
  fs.symlinkSync(path.dirname(require.resolve('nan/package.json', { paths: [src] })), path.join(modules, 'nan'));
  // node-gyp lets npm_config_* variables (npm_config_nodedir under `npm run`) override its flags
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_(package_)?config_/i.test(k)));
  env.PATH = `${path.dirname(real)}${path.delimiter}${env.PATH || ''}`;
  const r = spawnSync(real, [gyp, 'rebuild', `--nodedir=${nodeDir}`], { cwd: copy, env, encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const line = r.error?.message ?? `${r.stderr}\n${r.stdout}`.split('\n').find((l) => /\berr(or)?\b/i.test(l));
    throw new Error(`building fs-ext failed: ${(line ?? `node-gyp exited ${r.status}`).trim().slice(0, 120)}`);
  }
  const preload = path.join(modules, '..', 'fs-ext-preload.js');
  const url = pathToFileURL(path.join(copy, require(path.join(copy, 'package.json')).main)).href;
  fs.writeFileSync(preload, `'use strict';
require('node:module').registerHooks({
  resolve: (specifier, context, next) => (specifier === 'fs-ext' ? { url: ${JSON.stringify(url)}, format: 'commonjs', shortCircuit: true } : next(specifier, context)),
});
`);
  return ['--require', preload];
}

module.exports = { fsExtFor };
