'use strict';
// `npm start`: on a fresh clone installs and builds what is missing, then runs the conductor
// server with its dashboard (http://localhost:14355/ui/). Extra arguments go to `conductor`.
const { execSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit' });
if (!fs.existsSync(path.join(root, 'node_modules', '.package-lock.json'))) run('npm install --no-audit --no-fund');
if (!fs.existsSync(path.join(root, 'dist', 'apps', 'cli')) || !fs.existsSync(path.join(root, 'dist', 'apps', 'api'))) run('npm run build');
const res = spawnSync(process.execPath, [path.join(root, 'bin', 'conductor'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(res.status ?? 1);
