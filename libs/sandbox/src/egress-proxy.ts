import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { rmSync } from 'node:fs';

/** One egress decision of the proxy (logged to the task bus by the runner). */
export interface EgressDecision {
  host: string;
  port: number;
  allowed: boolean;
  /** `CONNECT` (tunnel, e.g. HTTPS) or the plain-HTTP method. */
  method: string;
}

/**
 * The real API key, injected only into plain-HTTP requests to the provider's `host:port`: every
 * header value carrying the placeholder gets the key instead (else `header` is set). `tls`: the
 * request goes on to the provider over HTTPS (port `tlsPort`), so an agent whose base URL is
 * `http://<provider host>` through the proxy reaches the real HTTPS API.
 */
export interface EgressCredential {
  host: string;
  port: number;
  placeholder: string;
  value: string;
  header: string;
  headerPrefix?: string;
  tls?: boolean;
  tlsPort?: number;
}

/** Headers with the credential in place of the placeholder (a copy). */
export function injectCredential(headers: OutgoingHttpHeaders, cred: EgressCredential): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  let replaced = false;
  for (const [k, v] of Object.entries(headers)) {
    if (typeof v === 'string' && v.includes(cred.placeholder)) {
      out[k] = v.split(cred.placeholder).join(cred.value);
      replaced = true;
    } else out[k] = v;
  }
  if (!replaced) out[cred.header] = `${cred.headerPrefix ?? ''}${cred.value}`;
  return out;
}

export interface EgressProxy {
  socketPath: string;
  /** Bytes moved per `host:port` (both directions). */
  bytes: Record<string, number>;
  close(): Promise<void>;
}

/** `host` allows ports 80 and 443; `host:port` that port only. Hosts compare lower-cased, exactly. */
export function hostAllowed(allow: string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return allow.some((entry) => {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.toLowerCase());
    if (!m || m[1].replace(/^\[(.*)\]$/, '$1') !== h) return false;
    return m[2] === undefined ? port === 80 || port === 443 : Number(m[2]) === port;
  });
}

function splitAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:/]+):(\d{1,5})$/.exec(authority);
  if (!m) return undefined;
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

/**
 * The sandbox's only way out: an HTTP proxy (CONNECT tunnels and absolute-URI plain HTTP) on a
 * unix socket, allowing only the listed hosts. Everything else is answered 403 and reported.
 */
export function startEgressProxy(opts: { socketPath: string; allow: string[]; onDecision(d: EgressDecision): void; credential?: EgressCredential }): Promise<EgressProxy> {
  const bytes: Record<string, number> = {};
  const count = (key: string, n: number) => (bytes[key] = (bytes[key] ?? 0) + n);
  const sockets = new Set<Socket>();
  const decide = (host: string, port: number, method: string): boolean => {
    const allowed = hostAllowed(opts.allow, host, port);
    opts.onDecision({ host, port, allowed, method });
    return allowed;
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('egress proxy: absolute http:// URL expected\n');
      return;
    }
    const port = Number(url.port || 80);
    if (url.protocol !== 'http:' || !decide(url.hostname, port, req.method ?? 'GET')) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`egress denied: ${url.hostname}:${port}\n`);
      return;
    }
    const key = `${url.hostname}:${port}`;
    let headers: OutgoingHttpHeaders = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const cred = opts.credential;
    const isProvider = !!cred && cred.host === url.hostname.toLowerCase() && cred.port === port;
    if (isProvider) headers = injectCredential(headers, cred);
    const send = isProvider && cred.tls ? httpsRequest : request;
    const upstreamPort = isProvider && cred.tls ? cred.tlsPort ?? 443 : port;
    const upstream = send({ host: url.hostname, port: upstreamPort, method: req.method, path: `${url.pathname}${url.search}`, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.on('data', (chunk: Buffer) => count(key, chunk.length));
      up.pipe(res);
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502).end(`egress proxy: ${err.message}\n`);
      else res.destroy();
    });
    req.on('data', (chunk: Buffer) => count(key, chunk.length));
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const target = splitAuthority(req.url ?? '');
    if (!target || !decide(target.host, target.port, 'CONNECT')) {
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const key = `${target.host}:${target.port}`;
    const up = connect(target.port, target.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) up.write(head);
      client.pipe(up).pipe(client);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('data', (chunk: Buffer) => count(key, chunk.length));
    client.on('data', (chunk: Buffer) => count(key, chunk.length));
    up.on('error', () => client.destroy());
    client.on('close', () => up.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.socketPath, () => {
      resolve({
        socketPath: opts.socketPath,
        bytes,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => {
              rmSync(opts.socketPath, { force: true });
              done();
            });
          }),
      });
    });
  });
}

/**
 * Runs inside the sandbox (`node -e`) when no perl is at hand (the slow path): listens on
 * 127.0.0.1:<port> of the empty network namespace and pipes each connection to the proxy's unix
 * socket; says `ok` on the fifo once listening (the agent starts only then).
 */
export const EGRESS_FORWARDER_JS = [
  "const net=require('net'),fs=require('fs');const [port,sock,fifo]=process.argv.slice(1);",
  "const s=net.createServer(c=>{const u=net.connect(sock);c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy());});",
  "s.on('error',e=>{fs.writeFileSync(fifo,'error '+e.message+'\\n');process.exit(1);});",
  "s.listen(Number(port),'127.0.0.1',()=>fs.writeFileSync(fifo,'ok\\n'));",
].join('');

/**
 * The same forwarder on a listening socket it inherits (fd `argv[1]`), bound by the launcher below
 * before the agent started: connections made while node is still starting wait in the socket's
 * backlog instead of being refused.
 */
export const EGRESS_FORWARDER_FD_JS = [
  "const net=require('net');const [fd,sock]=process.argv.slice(1);",
  "const s=net.createServer(c=>{const u=net.connect(sock);c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy());});",
  "s.on('error',e=>{process.stderr.write('sandbox: egress forwarder failed: '+e.message+'\\n');process.exit(1);});",
  's.listen({fd:Number(fd)});',
].join('');

/**
 * The fast start (docs/decisions/sandbox-egress-start.md): perl (Debian's perl-base, a few ms to
 * start) binds and listens on 127.0.0.1:<port> inside the sandbox, starts the node forwarder on
 * that socket (EGRESS_FORWARDER_FD_JS) and execs the agent at once, so the agent no longer waits
 * for node to boot. Arguments: port, node, forwarder js, proxy socket, then the agent's argv.
 * Any failure before the agent is exec'd exits 125 with one line: the agent never runs without
 * its forwarder's socket in place.
 */
export const EGRESS_LAUNCHER_PL = [
  // no modules (loading Socket.pm alone costs more than the rest): Linux's AF_INET = 2, SOCK_STREAM = 1
  'sub fail { print STDERR "sandbox: egress forwarder failed: @_\\n"; exit 125 }',
  'my ($port, $node, $js, $sock) = splice(@ARGV, 0, 4);',
  '$^F = 1023;', // the listening socket is created without close-on-exec: the forwarder inherits it
  'socket(my $s, 2, 1, 0) or fail("socket: $!");',
  'bind($s, pack("S n C4 x8", 2, $port, 127, 0, 0, 1)) or fail("bind 127.0.0.1:$port: $!");',
  'listen($s, 511) or fail("listen: $!");',
  '$^F = 2;',
  'my $pid = fork; defined $pid or fail("fork: $!");',
  'if (!$pid) { open(STDIN, "<", "/dev/null"); exec($node, "-e", $js, fileno($s), $sock) or do { print STDERR "sandbox: egress forwarder failed: exec $node: $!\\n"; exit 127 } }',
  'close($s);',
  '@ARGV or fail("no command");',
  'exec { $ARGV[0] } @ARGV or do { print STDERR "sandbox: cannot run $ARGV[0]: $!\\n"; exit 127 };',
].join('\n');
