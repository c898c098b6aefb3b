'use strict';
// The floor under the SSE scale figures (#15): a bare node:http server doing the least the real
// one must do — notice an append to the bus file (fs.watch), read the new bytes, write one event
// per new message to every open stream. No NestJS, no parsing beyond finding the bodies.
// node bench/sse-floor.js <bus file> → prints the port once listening.
const fs = require('node:fs');
const http = require('node:http');

const bus = process.argv[2];
const clients = new Set();
process.once('SIGINT', () => process.exit(0));
let offset = 0;
let carry = '';

function readNew() {
  // the bench removes its temp dir while a profiled (SIGINT) floor may still be exiting
  const size = fs.statSync(bus, { throwIfNoEntry: false })?.size ?? 0;
  if (size <= offset) return '';
  const buf = Buffer.alloc(size - offset);
  const fd = fs.openSync(bus, 'r');
  fs.readSync(fd, buf, 0, buf.length, offset);
  fs.closeSync(fd);
  offset = size;
  const text = carry + buf.toString('utf8');
  const cut = text.lastIndexOf('\n');
  carry = text.slice(cut + 1);
  return text.slice(0, cut + 1);
}

function events(text) {
  let out = '';
  for (const line of text.split('\n')) if (/^(p\d+|seed)$/.test(line)) out += `event: message\ndata: {"body":"${line}"}\n\n`;
  return out;
}

const seed = events(readNew());
fs.watch(bus, () => {
  const out = events(readNew());
  if (out) for (const res of clients) res.write(out);
});
http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(seed);
  clients.add(res);
  req.on('close', () => clients.delete(res));
}).listen(0, '127.0.0.1', function () {
  process.stdout.write(`${this.address().port}\n`);
});
