'use strict';
// Shared launcher of bin/run-agent and bin/conductor: runs the built CLI.
const path = require('node:path');
const fs = require('node:fs');
const nodeModule = require('node:module');

module.exports = function launch(programName) {
  // V8 compile cache (Node >= 22.1) before any of the CLI is loaded; Node 20 has no such function.
  if (typeof nodeModule.enableCompileCache === 'function' && !process.env.NODE_DISABLE_COMPILE_CACHE) {
    try {
      nodeModule.enableCompileCache();
    } catch {
      // an optimisation only: an unwritable cache directory must not stop the CLI
    }
  }
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
