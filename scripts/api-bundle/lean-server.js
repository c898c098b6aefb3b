'use strict';
// The API bundle's replacement for apps/api/src/boot/lean-server (scripts/bundle-api.js): what
// lean-load.ts defers in Node's require cache, the bundle makes lazy when it is built (LAZY in
// bundle-api.js), so nothing is left to do here.
