'use strict';
// Entry of the API bundle (scripts/bundle-api.js): the server process's entry, apps/api/src/boot/serve.ts
// (serveMain for a bare `conductor` from bin/launch.js, runServe for the CLI's serve commands).
// The V8 boot flags come first, before any other module runs (apps/api/src/boot/boot-flags.ts).
require('API_BOOT_FLAGS');
module.exports = require('API_SERVE');
