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

// Report what the dashboard ships (issue #20: only the Ring UI components used are bundled).
const zlib = require('node:zlib');
const assets = path.join(dir, 'dist', 'assets');
let total = 0;
let totalGz = 0;
for (const name of fs.readdirSync(assets).filter((n) => /\.(js|css)$/.test(n)).sort()) {
  const body = fs.readFileSync(path.join(assets, name));
  const gz = zlib.gzipSync(body).length;
  total += body.length;
  totalGz += gz;
  console.log(`bundle: ${name.padEnd(28)} ${(body.length / 1024).toFixed(1).padStart(7)} kB  (gzip ${(gz / 1024).toFixed(1)} kB)`);
}
console.log(`bundle: total js+css             ${(total / 1024).toFixed(1).padStart(7)} kB  (gzip ${(totalGz / 1024).toFixed(1)} kB)`);
