'use strict';
// Lets a script require the TypeScript sources (apps/, libs/) as jest does (jest.config.js): @swc/core
// compiles each .ts file on load (legacy decorators + their metadata, which NestJS reads) and
// `@app/<lib>` resolves to libs/<lib>/src. For build-time scripts only (docs:openapi).
const Module = require('node:module');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync } = require('@swc/core');

const ROOT = path.join(__dirname, '..', '..');
const SWC = {
  jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true }, target: 'es2022' },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const m = /^@app\/([^/]+)(.*)$/.exec(request);
  return resolve.call(this, m ? path.join(ROOT, 'libs', m[1], 'src') + m[2] : request, ...rest);
};
require.extensions['.ts'] = (mod, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...SWC, filename });
  mod._compile(code, filename);
};
