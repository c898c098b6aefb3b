import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export type Handler = (res: ServerResponse, req: IncomingMessage, body: string) => void | Promise<void>;

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 (port 0) answering requests with `handlers` in turn; the last one repeats. */
export async function scriptedServer(handlers: Handler[]): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() });
      const handler = handlers[Math.min(requests.length, handlers.length) - 1];
      void handler(res, req, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with a status, a JSON (or other) body and headers. */
export const reply =
  (code: number, body = '', headers: Record<string, string> = {}): Handler =>
  (res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };

/** Answers 200 with a server-sent-events body. */
export const sseReply =
  (text: string): Handler =>
  (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(text);
  };

export const sseEvent = (obj: unknown): string => `data: ${JSON.stringify(obj)}\n\n`;
