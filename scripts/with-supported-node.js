'use strict';
// `node scripts/with-supported-node.js <command…>` (npm test): runs the command as is on a supported
// Node; on an older one, under Node 22 from scripts/supported-node.js (first on PATH, so the bins'
// `#!/usr/bin/env node` finds it too), with fs-ext rebuilt for it when node_modules came from the old one.
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const nodeCheck = require('../bin/node-check');

const [cmd, ...args] = process.argv.slice(2);
const log = (line) => console.error(`with-supported-node: ${line}`);
let env = process.env;
if (!nodeCheck.supported(process.versions.node)) {
  const alt = require('./supported-node').supportedNode(log);
  if (!alt) return void nodeCheck(cmd);
  log(`Node ${process.version} is older than ${nodeCheck.ENGINES}; running \`${[cmd, ...args].join(' ')}\` under ${alt.bin}`);
  env = { ...process.env, PATH: `${path.dirname(alt.bin)}${path.delimiter}${process.env.PATH}`, npm_config_nodedir: alt.home };
  const root = path.join(__dirname, '..');
  if (spawnSync(alt.bin, ['-e', "require('fs-ext')"], { cwd: root }).status !== 0) {
    log(`rebuilding fs-ext for ${alt.bin}`);
    if (spawnSync('npm', ['rebuild', 'fs-ext'], { cwd: root, env, stdio: 'inherit' }).status !== 0) process.exit(1);
  }
}
const res = spawnSync(cmd, args, { stdio: 'inherit', env });
process.exit(res.status ?? 1);
