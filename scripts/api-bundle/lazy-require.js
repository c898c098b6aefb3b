'use strict';
// Part of the API bundle (scripts/bundle-api.js, LAZY): a module that bundled code requires at load
// time but an idle server never uses (fastify's http2/https/dns for servers we never create, the
// ~100 string validators class-validator requires for its decorators) stays outside the bundle,
// and Node's require loads it the first time one of its exports is read. The request is this
// module's query: `lazy-require.js?node:http2`; `?esm:validator/lib/isEmail` names a compiled ES
// module.
const standIn = require('../cli-bundle/stand-in');

// eslint-disable-next-line no-undef -- webpack's name for this module's query
const query = __resourceQuery.slice(1);
const esModule = query.startsWith('esm:');
const request = esModule ? query.slice(4) : query;
// eslint-disable-next-line no-undef -- webpack's name for the real Node require
module.exports = standIn(() => __non_webpack_require__(request), esModule);
