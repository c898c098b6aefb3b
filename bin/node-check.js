'use strict';
// The Node lines this package supports (package.json `engines`: ^22.13.0 || >=24), checked first by
// bin/run-agent, bin/conductor and `npm start` (scripts/start.js): on an older Node they print one
// line and exit 2 instead of failing somewhere inside. Plain ES5-level syntax, so any Node can parse it.
var ENGINES = 'Node.js 22.13+ or 24+';

/** Whether `version` ("22.13.0", "v24.1.0") is a supported line: 22 from 22.13 on, or 24 and later. */
function supported(version) {
  var parts = String(version).replace(/^v/, '').split('.').map(Number);
  var major = parts[0];
  var minor = parts[1];
  return major >= 24 || (major === 22 && minor >= 13);
}

/** True when this Node is supported; else writes the one line and sets exit code 2. */
function nodeCheck(programName) {
  if (supported(process.versions.node)) return true;
  process.stderr.write(programName + ': needs ' + ENGINES + ' (this is Node.js ' + process.version + ')\n');
  process.exitCode = 2;
  return false;
}

module.exports = nodeCheck;
module.exports.supported = supported;
module.exports.ENGINES = ENGINES;
