'use strict';
// Entry of the API bundle (scripts/bundle-api.js): server.js's exports (startServer) for the CLI's api-loader.
module.exports = require('API_SERVER');
