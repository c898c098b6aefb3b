'use strict';
// Part of the CLI and API bundles (LAZY in scripts/bundle-cli.js and scripts/bundle-api.js): a
// module that bundled code requires at load time but a command or an idle server may never use
// (built-ins such as node:crypto and node:http; the ~100 string validators class-validator requires
// for its decorators) stays outside the bundle, and Node's require loads it the first time one of
// its exports is read. The request is this module's query: `lazy-require.js?node:http2`;
// `?esm:validator/lib/isEmail` names a compiled ES module.
const standIn = require('./stand-in');

// eslint-disable-next-line no-undef -- webpack's name for this module's query
const query = __resourceQuery.slice(1);
const esModule = query.startsWith('esm:');
const request = esModule ? query.slice(4) : query;
// eslint-disable-next-line no-undef -- webpack's name for the real Node require
module.exports = standIn(() => __non_webpack_require__(request), esModule);
