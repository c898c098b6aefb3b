'use strict';
// Part of the CLI bundle (scripts/bundle-cli.js), not of the tsc build: a package that
// nest-commander requires eagerly but no command of ours uses at start-up stays out of the bundle
// and is loaded by Node's own require the first time one of its exports is read.
module.exports = function lazyPackage(name, keys) {
  let real;
  // eslint-disable-next-line no-undef -- webpack's name for the real Node require
  const load = () => (real ??= __non_webpack_require__(name));
  const standIn = {};
  for (const key of keys) Object.defineProperty(standIn, key, { enumerable: true, get: () => load()[key] });
  return standIn;
};
