'use strict';
// The floor under the server's start-up figures (#15): NestJS + Fastify with one controller
// (server-floor-app.js) and the same start-up trimming (the rxjs bundle), nothing of ours. Prints
// the port once listening.
//   unbundled: node bench/server-floor.js <dist lean-server.js>
//   bundled:   node bench/server-floor.js --bundle <floor bundle>
// The bundle loads as bin/launch.js loads the API bundle: through Node's compile cache.
const nodeModule = require('node:module');

let listening;
if (process.argv[2] === '--bundle') {
  nodeModule.enableCompileCache();
  listening = require(process.argv[3]);
} else {
  require(process.argv[2]);
  listening = require('./server-floor-app');
}
listening.then((port) => {
  process.stdout.write(`${port}\n`);
  nodeModule.flushCompileCache();
});
