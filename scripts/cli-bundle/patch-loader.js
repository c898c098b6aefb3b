'use strict';
// Webpack loader of the CLI and API bundles (scripts/bundle-cli.js, scripts/bundle-api.js): the one
// rewrite of third-party source that still carries its weight on Node 22/24 (docs/decisions.md,
// "Start-up and memory"). The build fails when the pattern is no longer found, so an upgrade cannot
// silently drop it. The other five patches measured below noise or have public replacements
// (Fastify's compilersFactory option, the API bundle's glob stand-in) and are gone.
const PATCHES = [
  {
    // Logger and ConsoleLogger each build an Intl.DateTimeFormat when they load (ICU data: ~15 ms
    // of CPU on Node 22/24 for the first, before any command runs); a timestamp is needed only
    // when a log line is printed. NestJS has no option for it; this goes with Nest on the hot path.
    file: /@nestjs[\\/]common[\\/]services[\\/](console-)?logger\.service\.js$/,
    from: /const dateTimeFormatter = (new Intl\.DateTimeFormat\([^;]*\));/,
    to: 'let dateTimeFormatterReal;\nconst dateTimeFormatter = { format: (t) => (dateTimeFormatterReal ??= $1).format(t) };',
  },
];

/** The patches of a bundle: `app` is 'cli' or 'api' (both get the same). */
const patchesOf = () => PATCHES;

module.exports = function patchLoader(source) {
  const { app } = this.getOptions();
  const patch = patchesOf(app).find((p) => p.file.test(this.resourcePath));
  if (!patch) return source;
  if (!patch.from.test(source)) throw new Error(`${app} bundle: ${this.resourcePath} no longer matches ${patch.from}; update scripts/cli-bundle/patch-loader.js`);
  return source.replace(patch.from, patch.to);
};

module.exports.patchesOf = patchesOf;
