'use strict';
// Webpack loader of the CLI and API bundles (scripts/bundle-cli.js, scripts/bundle-api.js):
// start-up costs of NestJS, nest-commander and Fastify that every start pays but only logging,
// prompting, HTTP handlers or schemas use, made lazy or skipped (measured in docs/decisions.md, "CLI
// start-up: one bundle" and "Server idle memory"). A patch marked `cli` applies to the CLI bundle
// only (the loader's `app` option). The build fails when a pattern is no longer found, so an
// upgrade cannot silently drop a patch.
const PATCHES = [
  {
    // Logger and ConsoleLogger each build an Intl.DateTimeFormat (ICU data, ~14 ms for the first)
    // when they load; a timestamp is needed only when a log line is printed
    file: /@nestjs[\\/]common[\\/]services[\\/](console-)?logger\.service\.js$/,
    from: /const dateTimeFormatter = (new Intl\.DateTimeFormat\([^;]*\));/,
    to: 'let dateTimeFormatterReal;\nconst dateTimeFormatter = { format: (t) => (dateTimeFormatterReal ??= $1).format(t) };',
  },
  {
    // CommandRunnerModule reads process.stdin (creating the stream) when it loads; only a prompt reads it
    file: /nest-commander[\\/]src[\\/]command-runner\.module\.js$/,
    from: /inquirerOptions = \{\s*input: process\.stdin,\s*output: process\.stdout,\s*\};/,
    to: 'inquirerOptions = {\n    get input() { return process.stdin; },\n    get output() { return process.stdout; },\n};',
  },
  {
    // The scanner reads every provider's methods for guards, interceptors, filters, pipes and route
    // parameters (five metadata lookups per method); those enhancers wrap only controllers,
    // gateways and microservice handlers, which the CLI has none of, never a provider or a command;
    // the server's controllers need it
    cli: true,
    file: /@nestjs[\\/]core[\\/]scanner\.js$/,
    from: /reflectDynamicMetadata\(cls, token, hostToken = cls\) \{\s*if \(!cls \|\| !cls\.prototype\) \{/,
    to: 'reflectDynamicMetadata(cls, token, hostToken = cls) {\n        if (true) { // the CLI has no controllers: no enhancers to find (scripts/cli-bundle/patch-loader.js)',
  },
  {
    // The injector times each provider's instantiation (for the graph inspector) with perf_hooks,
    // which loads nine more built-ins; a monotonic clock in ms measures the same durations
    cli: true,
    file: /@nestjs[\\/]core[\\/]injector[\\/]injector\.js$/,
    from: /getNowTimestamp\(\) \{\s*return perf_hooks_1\.performance\.now\(\);/,
    to: 'getNowTimestamp() {\n        return Number(process.hrtime.bigint()) / 1e6; // not perf_hooks (scripts/cli-bundle/patch-loader.js)',
  },
  {
    // Fastify builds its schema compilers (Ajv with its formats, fast-json-stringify: ~290 KB of
    // code run at load) when an instance is created; only a route with a schema uses them
    file: /[\\/]fastify[\\/]lib[\\/]schema-controller\.js$/,
    from: /const ValidatorSelector = require\('@fastify\/ajv-compiler'\)\s*compilersFactory\.buildValidator = ValidatorSelector\(\)([\s\S]*?)const SerializerSelector = require\('@fastify\/fast-json-stringify-compiler'\)\s*compilersFactory\.buildSerializer = SerializerSelector\(\)/,
    to: "let buildValidator\n    compilersFactory.buildValidator = (...args) => (buildValidator ??= require('@fastify/ajv-compiler')())(...args)$1let buildSerializer\n    compilersFactory.buildSerializer = (...args) => (buildSerializer ??= require('@fastify/fast-json-stringify-compiler')())(...args)",
  },
  {
    // @fastify/static loads glob (~86 KB) to list the files up front, which it does only with
    // `wildcard: false`; the server serves the UI with wildcard routes
    file: /@fastify[\\/]static[\\/]index\.js$/,
    from: /const \{ glob \} = require\('glob'\)/,
    to: "const glob = (...args) => require('glob').glob(...args)",
  },
];

/** The patches of a bundle: `app` is 'cli' or 'api'. */
const patchesOf = (app) => PATCHES.filter((p) => !p.cli || app === 'cli');

module.exports = function patchLoader(source) {
  const { app } = this.getOptions();
  const patch = patchesOf(app).find((p) => p.file.test(this.resourcePath));
  if (!patch) return source;
  if (!patch.from.test(source)) throw new Error(`${app} bundle: ${this.resourcePath} no longer matches ${patch.from}; update scripts/cli-bundle/patch-loader.js`);
  return source.replace(patch.from, patch.to);
};

module.exports.patchesOf = patchesOf;
