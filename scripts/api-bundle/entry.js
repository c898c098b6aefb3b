'use strict';
// Entry of the API bundle (scripts/bundle-api.js): the server process's entry, apps/api/src/boot/serve.ts
// (serveMain for a bare `conductor` from bin/launch.js, runServe for the CLI's serve commands).
module.exports = require('API_SERVE');
