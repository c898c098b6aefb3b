'use strict';
// Part of the CLI and API bundles: the stand-in of a module that runs on first use (the lazy-barrel
// loader's re-exported files; both bundles' LAZY modules and the API bundle's DEFERRED ones).
// `load()` returns the real module's exports; every read, write and key listing goes to them.
// `esModule`, when given, answers `__esModule` before the module is loaded, which interop helpers
// ask at require time (true for a compiled ES module; false answers undefined).
module.exports = function standIn(load, esModule) {
  let real;
  const target = () => (real ??= load());
  return new Proxy(
    {},
    {
      get: (_t, key) => (key === '__esModule' && !real && esModule !== undefined ? esModule || undefined : target()[key]),
      set: (_t, key, value) => Reflect.set(target(), key, value),
      has: (_t, key) => key in target(),
      ownKeys: () => Reflect.ownKeys(target()),
      getOwnPropertyDescriptor: (_t, key) => {
        const d = Object.getOwnPropertyDescriptor(target(), key);
        return d ? { ...d, configurable: true } : undefined;
      },
      defineProperty: (_t, key, d) => Reflect.defineProperty(target(), key, d),
      deleteProperty: (_t, key) => Reflect.deleteProperty(target(), key),
    },
  );
};
