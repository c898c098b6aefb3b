'use strict';
// Entry of the CLI bundle: main.js as a dependency, so its `require.main === module` start-up
// (used when main.js is run directly) stays false and bin/launch.js alone calls main().
module.exports = require('CLI_MAIN');
