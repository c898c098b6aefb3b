'use strict';
// nest-commander requires cosmiconfig when it loads; it reads it only for `usePlugins`, which we never set.
module.exports = require('./lazy')('cosmiconfig', ['cosmiconfig', 'cosmiconfigSync', 'defaultLoaders', 'defaultLoadersSync', 'metaSearchPlaces']);
