'use strict';
// Part of the CLI bundle (scripts/bundle-cli.js), not of the tsc build: NestJS's optional packages
// @nestjs/microservices and @nestjs/websockets (not dependencies of this project; the CLI never
// uses them). NestJS requires them inside try/catch when it loads; this fails as an absent package
// does, without Node searching every node_modules folder and building its error (a few ms per
// command). The bundle drops a module that threw from its cache, so every require fails alike.
const err = new Error('Cannot find module (not part of the run-agent bundle)');
err.code = 'MODULE_NOT_FOUND';
throw err;
