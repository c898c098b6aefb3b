'use strict';
// Shared launcher of bin/run-agent and bin/conductor: runs the built CLI.
const path = require('node:path');
const fs = require('node:fs');

module.exports = function launch(programName) {
  const entry = path.join(__dirname, '..', 'dist', 'apps', 'cli', 'apps', 'cli', 'src', 'main.js');
  if (!fs.existsSync(entry)) {
    process.stderr.write(`${programName}: the CLI is not built (missing ${entry}); run \`npm ci && npm run build\` in ${path.join(__dirname, '..')}\n`);
    process.exit(1);
  }
  require(entry).main(process.argv.slice(2), programName).catch((err) => {
    process.stderr.write(`Error: ${err && err.message ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
};
