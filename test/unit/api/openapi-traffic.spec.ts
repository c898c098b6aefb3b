import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiApp, TestApi } from '../../utils/api-app';
import { openApiMismatches, settleOpenApiChecks, useDocument, validatedExchanges } from '../../utils/openapi-traffic';

// The OpenAPI traffic check itself (test/utils/openapi-traffic.ts): each planted mismatch between the
// server and a copy of docs/openapi.json is found. The list is emptied after each case, else the
// setup file's afterAll would fail this file for the planted ones.
const DOC = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'openapi.json'), 'utf8')) as Record<string, any>;
const copy = () => JSON.parse(JSON.stringify(DOC)) as Record<string, any>;

describe('the OpenAPI traffic check', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createApiApp({ apiKey: 'k-traffic' });
  });
  afterAll(() => api.close());
  afterEach(() => {
    openApiMismatches.length = 0;
    useDocument(DOC);
  });

  const get = async (url: string, key = 'k-traffic') => {
    const res = await api.app.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
    await settleOpenApiChecks();
    return res;
  };
  const problems = () => openApiMismatches.flatMap((m) => m.problems);

  it('passes traffic that matches the checked-in document and counts it', async () => {
    const before = validatedExchanges();
    expect((await get('/api/v1/version')).statusCode).toBe(200);
    expect((await get('/api/v1/status', '')).statusCode).toBe(401);
    expect((await get('/api/projects?limit=x')).statusCode).toBe(400);
    expect(validatedExchanges() - before).toBe(3);
    expect(openApiMismatches).toEqual([]);
  });

  it('finds a body that does not match the documented schema', async () => {
    const doc = copy();
    doc.paths['/api/v1/version'].get.responses['200'].content['application/json'].schema.properties.version = { type: 'integer' };
    useDocument(doc);
    await get('/api/v1/version');
    expect(problems()).toEqual([expect.stringMatching(/^response: .*version.*integer/)]);
  });

  it('finds a status the operation does not document', async () => {
    const doc = copy();
    delete doc.paths['/api/v1/status'].get.responses['401'];
    delete doc.paths['/api/v1/status'].get.responses['4XX'];
    useDocument(doc);
    await get('/api/v1/status', '');
    expect(problems()).toEqual([expect.stringMatching(/status 401 is not documented/)]);
  });

  it('finds a content type the operation does not document', async () => {
    const doc = copy();
    const ok = doc.paths['/api/v1/version'].get.responses['200'];
    ok.content = { 'text/plain': ok.content['application/json'] };
    useDocument(doc);
    await get('/api/v1/version');
    expect(problems()).toEqual(expect.arrayContaining([expect.stringMatching(/media type "application\/json.*text\/plain/)]));
  });

  it('finds a request the document rejects that the server accepted', async () => {
    const doc = copy();
    doc.paths['/api/v1/version'].get.parameters = [{ name: 'must', in: 'query', required: true, schema: { type: 'string' } }];
    useDocument(doc);
    await get('/api/v1/version');
    expect(problems()).toEqual([expect.stringMatching(/^request the document rejects was accepted: .*must/)]);
  });

  it('finds a route the document does not list', async () => {
    const doc = copy();
    delete doc.paths['/api/v1/version'];
    useDocument(doc);
    await get('/api/v1/version');
    expect(problems()).toEqual(['route GET /api/v1/version is not in docs/openapi.json']);
  });
});
