'use strict';
// The floor under the server's start-up figures (#15): NestJS + Fastify with one controller
// (server-floor-app.js) and the same start-up trimming (rxjs bundle, V8 boot flags), nothing of
// ours. Prints the port once listening.
//   unbundled: node bench/server-floor.js <dist lean-server.js>
//   bundled:   node bench/server-floor.js --bundle <floor bundle> <bin/code-cache.js>
// The bundle loads as bin/launch.js loads the API bundle: Node's compile cache where Node has it,
// else bin/code-cache.js (variant `serve`), saved once listening.
const nodeModule = require('node:module');
const { setImmediate } = require('node:timers');

function loadBundle(bundle, codeCacheJs) {
  if (typeof nodeModule.enableCompileCache === 'function') {
    nodeModule.enableCompileCache();
    return { listening: require(bundle), save: () => undefined };
  }
  const cache = require(codeCacheJs);
  return { listening: cache.requireWithCodeCache(bundle, 'serve'), save: () => cache.saveCodeCache(bundle) };
}

let loaded;
if (process.argv[2] === '--bundle') {
  loaded = loadBundle(process.argv[3], process.argv[4]);
} else {
  const { leanBootDone } = require(process.argv[2]);
  loaded = { listening: require('./server-floor-app').then((port) => { leanBootDone(); return port; }), save: () => undefined };
}
loaded.listening.then((port) => {
  process.stdout.write(`${port}\n`);
  setImmediate(loaded.save);
});
