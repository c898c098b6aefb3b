#!/usr/bin/env node
'use strict';
// The host's task supervisor, started on demand by bin/task-client.js: serves the socket in argv
// (apps/cli/src/supervisor/task-supervisor.ts) and exits once idle.
if (require('./node-check')('run-agent')) require('./launch').supervise(process.argv[2]);
