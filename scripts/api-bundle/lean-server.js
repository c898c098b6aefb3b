'use strict';
// The API bundle's replacement for apps/api/src/boot/lean-server (scripts/bundle-api.js). The
// packages it defers (class-validator's internals, prom-client's OpenTelemetry API) stay outside
// the bundle, so the stand-ins go into Node's own require cache: lean-load.js is loaded from the
// tsc output by Node's require, not bundled (inside a bundle `require.cache` is webpack's).
// rxjs is bundled (its barrels made lazy), so its UMD copy is not needed here.
const path = require('node:path');

// eslint-disable-next-line no-undef -- webpack's name for the real Node require
__non_webpack_require__(path.join(__dirname, '..', 'apps', 'api', 'src', 'boot', 'lean-load.js')).deferServerPackages();
module.exports = require('API_YOUNG_GEN');
