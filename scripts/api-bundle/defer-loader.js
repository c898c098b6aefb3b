'use strict';
// webpack loader of the API bundle (scripts/bundle-api.js, DEFERRED): the module it loads becomes a
// stand-in (stand-in.js) that runs the real module, bundled as usual, on first use.
const standIn = require.resolve('./stand-in');

module.exports = function deferLoader() {
  return `module.exports = require(${JSON.stringify(standIn)})(() => require(${JSON.stringify(this.resourcePath)}));\n`;
};
