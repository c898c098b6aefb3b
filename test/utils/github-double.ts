import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { buildClientSchema, execute, GraphQLSchema, parse, validate } from 'graphql';

/**
 * GitHub's API as GitHub publishes it, on a real socket on 127.0.0.1, for the pull-request tests
 * (issue #34). Nothing here describes GitHub by hand:
 * - REST: GitHub's own OpenAPI description (`@octokit/openapi`, api.github.com). Every request is
 *   validated against it with Prism's validators (a request GitHub would reject is a `problem`),
 *   and every answer is GitHub's documented example answer of that operation, validated against the
 *   operation's response schema too. The examples are static (one pull request, number 1347), so
 *   the double keeps the pull requests created through it and overlays on the example exactly the
 *   fields the request set (title, body, head, base, draft, state) plus a number, a node id and
 *   the html_url of that number.
 *   GETs carry an ETag and answer 304 to a matching If-None-Match.
 * - GraphQL: GitHub's published schema (`@octokit/graphql-schema`): each document is parsed and
 *   validated against it, and executed on it (only `markPullRequestReadyForReview` has a resolver).
 */
export interface GithubDouble {
  /** Give it as forge.github.api_url. */
  url: string;
  requests: Array<{ method: string; path: string; body: unknown; authorization?: string; ifNoneMatch?: string; status?: number }>;
  /** Requests or answers GitHub's descriptions reject; a test expects none. */
  problems: string[];
  pulls: Map<number, Record<string, unknown>>;
  /** GitHub state of issues the test changed (`closed`): the GET answers it. */
  issueStates: Map<number, string>;
  close(): Promise<void>;
}

interface Operation {
  method: string;
  path: string;
  responses: Array<{ code: string; contents?: Array<{ mediaType: string; examples?: Array<{ value: unknown }> }> }>;
}

const PATHS = ['/repos/{owner}/{repo}/pulls', '/repos/{owner}/{repo}/pulls/{pull_number}', '/repos/{owner}/{repo}/issues/{issue_number}'];

type Prism = typeof import('@stoplight/prism-http/dist/validator');
let loaded: Promise<{ ops: Operation[]; prism: Prism; schema: GraphQLSchema }> | undefined;

async function load(): Promise<{ ops: Operation[]; prism: Prism; schema: GraphQLSchema }> {
  const pkg = dirname(require.resolve('@octokit/openapi/package.json'));
  const doc = JSON.parse(readFileSync(join(pkg, 'generated', 'api.github.com.json'), 'utf8'));
  const subset = { ...doc, paths: Object.fromEntries(PATHS.map((p) => [p, doc.paths[p]])) };
  const { getHttpOperationsFromSpec } = await import('@stoplight/prism-http/dist/utils/operations');
  const prism = await import('@stoplight/prism-http/dist/validator');
  const ops = (await getHttpOperationsFromSpec(subset)) as unknown as Operation[];
  // @octokit/graphql-schema exports only its ES module: its schema file is read beside @octokit/openapi
  const schemaDir = join(pkg, '..', 'graphql-schema');
  // the introspection result (GitHub's published SDL repeats a few fields, which buildSchema refuses)
  const introspection = JSON.parse(readFileSync(join(schemaDir, 'schema.json'), 'utf8'));
  const schema = buildClientSchema(introspection.data ?? introspection);
  return { ops, prism, schema };
}

const template = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '([^/]+)')}$`);

function errorsOf(result: { _tag: string; left?: Array<{ severity: number; message: string; path?: Array<string | number> }> }): string[] {
  if (result._tag !== 'Left' || !result.left) return [];
  return result.left.filter((d) => d.severity === 0).map((d) => `${d.path?.length ? d.path.join('.') + ': ' : ''}${d.message}`);
}

function exampleOf(op: Operation, code: string): unknown {
  const r = op.responses.find((x) => x.code === code);
  return structuredClone(r?.contents?.find((c) => /json/.test(c.mediaType))?.examples?.[0]?.value);
}

export async function githubDouble(): Promise<GithubDouble> {
  loaded ??= load();
  const { ops, prism, schema } = await loaded;
  const requests: GithubDouble['requests'] = [];
  const problems: string[] = [];
  const pulls = new Map<number, Record<string, unknown>>();
  const issueStates = new Map<number, string>();
  let nextNumber = 1347;

  /** Prism's output problems, with array indexes folded (one problem per property, whatever the item). */
  const outputErrors = (op: Operation, status: number, body: unknown) =>
    errorsOf(prism.validateOutput({ resource: op as never, element: { statusCode: status, headers: { 'content-type': 'application/json' }, body } }) as never).map((p) => p.replace(/\b\d+\./g, 'N.'));

  const answer = (res: ServerResponse, req: IncomingMessage, op: Operation | undefined, status: number, body: unknown) => {
    if (op) {
      // what GitHub's own example already breaks in GitHub's schema (e.g. requested_teams without `type`) is not ours
      const own = new Set(outputErrors(op, status, exampleOf(op, String(status))));
      const out = outputErrors(op, status, body).filter((p) => !own.has(p));
      problems.push(...out.map((p) => `${op.method.toUpperCase()} ${op.path} answer: ${p}`));
    }
    const text = JSON.stringify(body);
    const etag = `"${createHash('sha1').update(text).digest('hex')}"`;
    if (req.method === 'GET' && req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ETag: etag }).end();
      return;
    }
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ETag: etag }).end(text);
  };

  const pullAnswer = (op: Operation, code: string, pull: Record<string, unknown>) => {
    const ex = exampleOf(op, code) as Record<string, unknown>;
    const example = (Array.isArray(ex) ? ex[0] : ex) as Record<string, Record<string, unknown>>;
    return { ...example, ...pull, head: { ...example.head, ref: pull.head }, base: { ...example.base, ref: pull.base } };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const entry: GithubDouble['requests'][number] = { method: req.method ?? '', path: url.pathname + url.search, body, authorization: req.headers.authorization, ifNoneMatch: req.headers['if-none-match'] };
      requests.push(entry);
      res.on('finish', () => (entry.status = res.statusCode));
      if (req.method === 'POST' && url.pathname === '/graphql') return graphql(res, body as { query: string; variables?: Record<string, unknown> });
      const method = (req.method ?? 'GET').toLowerCase();
      const op = ops.find((o) => o.method === method && template(o.path).test(url.pathname));
      if (!op) {
        problems.push(`${req.method} ${url.pathname}: not an operation of GitHub's API`);
        return answer(res, req, undefined, 404, { message: 'Not Found' });
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const input = errorsOf(prism.validateInput({ resource: op as never, element: { method: method as never, url: { path: url.pathname, query: Object.fromEntries(url.searchParams) }, headers, body } }) as never);
      problems.push(...input.map((p) => `${req.method} ${op.path} request: ${p}`));
      const params = template(op.path).exec(url.pathname)!.slice(1);
      const sent = (body ?? {}) as Record<string, unknown>;
      if (op.path.endsWith('/pulls') && method === 'post') {
        const number = nextNumber++;
        const pull = { number, node_id: Buffer.from(`PullRequest:${number}`).toString('base64'), html_url: `https://github.com/${params[0]}/${params[1]}/pull/${number}`, title: sent.title, body: sent.body, draft: sent.draft === true, state: 'open', head: sent.head, base: sent.base };
        pulls.set(number, pull);
        return answer(res, req, op, 201, pullAnswer(op, '201', pull));
      }
      if (op.path.endsWith('/pulls') && method === 'get') {
        const head = url.searchParams.get('head')?.split(':')[1];
        return answer(res, req, op, 200, [...pulls.values()].filter((p) => p.head === head).map((p) => pullAnswer(op, '200', p)));
      }
      if (op.path.endsWith('{pull_number}')) {
        const pull = pulls.get(Number(params[2]));
        if (!pull) return answer(res, req, op, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
        if (method === 'patch') for (const k of ['title', 'body', 'state', 'base']) if (k in sent) pull[k] = sent[k];
        return answer(res, req, op, 200, pullAnswer(op, '200', pull));
      }
      const issue = exampleOf(op, '200') as Record<string, unknown>;
      return answer(res, req, op, 200, { ...issue, number: Number(params[2]), state: issueStates.get(Number(params[2])) ?? 'open' });
    });
  });

  const graphql = (res: ServerResponse, body: { query: string; variables?: Record<string, unknown> }) => {
    let result: unknown;
    try {
      const document = parse(body.query);
      const invalid = validate(schema, document);
      if (invalid.length) {
        problems.push(...invalid.map((e) => `graphql: ${e.message}`));
        result = { errors: invalid.map((e) => ({ message: e.message })) };
      } else {
        const rootValue = {
          markPullRequestReadyForReview: ({ input }: { input: { pullRequestId: string } }) => {
            const pull = [...pulls.values()].find((p) => p.node_id === input.pullRequestId);
            if (!pull) throw new Error(`Could not resolve to a node with the global id of '${input.pullRequestId}'`);
            pull.draft = false;
            return { pullRequest: { isDraft: false } };
          },
        };
        result = execute({ schema, document, rootValue, variableValues: body.variables });
      }
    } catch (err) {
      problems.push(`graphql: ${(err as Error).message}`);
      result = { errors: [{ message: (err as Error).message }] };
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(result));
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    problems,
    pulls,
    issueStates,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
