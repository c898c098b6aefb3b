import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  /** The status this receiver answered with. */
  answered: number;
}

export interface WebhookReceiver {
  server: Server;
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A real HTTP webhook receiver on 127.0.0.1 (port 0) recording every request. The n-th request
 * is answered with `statuses[n]` (200 once the list runs out), to script retries; `headers` go on
 * every answer (e.g. a `Location` for a 3xx).
 */
export function webhookReceiver(statuses: number[] = [], headers: Record<string, string> = {}): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const answered = statuses[received.length] ?? 200;
      received.push({ headers: req.headers, body, answered });
      res.writeHead(answered, headers).end();
    });
  });
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close })),
  );
}
