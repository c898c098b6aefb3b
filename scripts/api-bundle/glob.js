'use strict';
// The API bundle's stand-in of the `glob` package (scripts/bundle-api.js): @fastify/static requires
// it when it loads but calls it only with `wildcard: false`, which the server does not use; glob
// (~17 ms of CPU on Node 22/24) loads on the first call. Only `glob()` is there: the bundle's one
// user takes nothing else (`const { glob } = require('glob')`).
/* global __non_webpack_require__ */
const nodeRequire = typeof __non_webpack_require__ === 'function' ? __non_webpack_require__ : require('node:module').createRequire(__filename);

exports.glob = (...args) => nodeRequire('glob').glob(...args);
