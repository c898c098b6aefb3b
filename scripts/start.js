'use strict';
// `npm start`: on a fresh clone installs (npm ci) what is missing, rebuilds what is missing or
// older than its sources (e.g. after `git pull`), then runs the conductor server with its
// dashboard (http://localhost:14355/ui/). Extra arguments go to `conductor`.
// On an unsupported Node it says which Node is needed and exits 2 before anything else (bin/node-check.js).
if (!require('../bin/node-check')('npm start')) return;
const { execSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { staleBuilds } = require('./stale-build');

const root = path.join(__dirname, '..');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit' });
if (!fs.existsSync(path.join(root, 'node_modules', '.package-lock.json'))) run('npm ci --no-audit --no-fund');
const BUILD = { api: 'npm run build:api', cli: 'npm run build:cli', ui: 'npm run build:ui' };
for (const part of staleBuilds(root)) {
  console.error(`npm start: building ${part} (missing or older than its sources)`);
  run(BUILD[part]);
}
const res = spawnSync(process.execPath, [path.join(root, 'bin', 'conductor'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(res.status ?? 1);
