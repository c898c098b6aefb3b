'use strict';
// The API bundle's replacement for apps/api/src/boot/lean-server (scripts/bundle-api.js): what
// lean-load.ts defers in Node's require cache, the bundle makes lazy when it is built (LAZY in
// bundle-api.js); the V8 boot flags remain (set first by the bundle's entry).
module.exports = require('API_BOOT_FLAGS');
