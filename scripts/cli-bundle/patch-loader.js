'use strict';
// Webpack loader of the CLI bundle (scripts/bundle-cli.js): start-up costs of NestJS and
// nest-commander that every command pays but only logging, prompting and HTTP handlers use, made
// lazy or skipped (measured in docs/decisions.md, "CLI start-up: one bundle"). The build fails when a
// pattern is no longer found, so an upgrade cannot silently drop a patch.
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
    // gateways and microservice handlers, which the CLI has none of, never a provider or a command
    file: /@nestjs[\\/]core[\\/]scanner\.js$/,
    from: /reflectDynamicMetadata\(cls, token, hostToken = cls\) \{\s*if \(!cls \|\| !cls\.prototype\) \{/,
    to: 'reflectDynamicMetadata(cls, token, hostToken = cls) {\n        if (true) { // the CLI has no controllers: no enhancers to find (scripts/cli-bundle/patch-loader.js)',
  },
];

module.exports = function patchLoader(source) {
  const patch = PATCHES.find((p) => p.file.test(this.resourcePath));
  if (!patch) return source;
  if (!patch.from.test(source)) throw new Error(`cli bundle: ${this.resourcePath} no longer matches ${patch.from}; update scripts/cli-bundle/patch-loader.js`);
  return source.replace(patch.from, patch.to);
};

module.exports.PATCHES = PATCHES;
