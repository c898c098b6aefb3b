'use strict';
// Builds the web dashboard in frontend/ into frontend/dist (served by the API server at / and /ui/).
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..', 'frontend');
if (!fs.existsSync(path.join(dir, 'package.json'))) {
  console.log('frontend/: no package.json yet, nothing to build');
  process.exit(0);
}
const run = (cmd) => execSync(cmd, { cwd: dir, stdio: 'inherit' });
if (!fs.existsSync(path.join(dir, 'node_modules'))) run('npm ci --no-audit --no-fund');
run('npm run build');
