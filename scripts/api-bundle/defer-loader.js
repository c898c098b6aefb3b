'use strict';
// webpack loader of the API bundle (scripts/bundle-api.js, DEFERRED): the module it loads becomes a
// stand-in (cli-bundle/stand-in.js) that runs the real module, bundled as usual, on first use.
const standIn = require.resolve('../cli-bundle/stand-in');

module.exports = function deferLoader() {
  return `module.exports = require(${JSON.stringify(standIn)})(() => require(${JSON.stringify(this.resourcePath)}), false);\n`;
};
