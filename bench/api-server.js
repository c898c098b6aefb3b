'use strict';
// The API bench's server, in a process of its own as a real server is (api.bench.js starts it): a
// client in the server's own process shares its thread, and added ~1 ms to every figure.
// Prints the server's URL once it listens; stops on SIGTERM.
//   node bench/api-server.js <dist server.js> <runs root>
const [serverJs, root] = process.argv.slice(2);
require(serverJs)
  .startServer({ root, host: '127.0.0.1', port: 0, portExplicit: true, sse: { heartbeatIntervalMs: 60000 } })
  .then(({ app, url }) => {
    process.stdout.write(`${url}\n`);
    process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
  })
  .catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
