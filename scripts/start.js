'use strict';
// `npm start`: on a fresh clone installs (npm ci) what is missing, rebuilds what is missing or
// older than its sources (e.g. after `git pull`), then runs the conductor server with its
// dashboard (http://localhost:14355/ui/). Extra arguments go to `conductor`.
// On an unsupported Node it runs itself again under a supported one (scripts/supported-node.js);
// when none can be had it says which Node is needed and exits 2 (bin/node-check.js).
const { execSync, spawnSync } = require('node:child_process');
const path = require('node:path');
const nodeCheck = require('../bin/node-check');

const log = (line) => console.error(`npm start: ${line}`);
if (!nodeCheck.supported(process.versions.node)) {
  const alt = require('./supported-node').supportedNode(log);
  if (!alt) return void nodeCheck('npm start');
  log(`Node ${process.version} is older than ${nodeCheck.ENGINES}; running under ${alt.bin}`);
  const env = { ...process.env, PATH: `${path.dirname(alt.bin)}${path.delimiter}${process.env.PATH}`, npm_config_nodedir: alt.home };
  const res = spawnSync(alt.bin, [process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit', env });
  process.exit(res.status ?? 1);
}
const fs = require('node:fs');
const { staleBuilds } = require('./stale-build');

const root = path.join(__dirname, '..');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit' });
if (!fs.existsSync(path.join(root, 'node_modules', '.package-lock.json'))) run('npm ci --no-audit --no-fund');
// node_modules installed under another Node: its one native addon is rebuilt for this one
else if (spawnSync(process.execPath, ['-e', "require('fs-ext')"], { cwd: root }).status !== 0) {
  log(`rebuilding fs-ext for Node ${process.version}`);
  run('npm rebuild fs-ext');
}
const BUILD = { api: 'npm run build:api', cli: 'npm run build:cli', ui: 'npm run build:ui' };
for (const part of staleBuilds(root)) {
  log(`building ${part} (missing or older than its sources)`);
  run(BUILD[part]);
}
const res = spawnSync(process.execPath, [path.join(root, 'bin', 'conductor'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(res.status ?? 1);
