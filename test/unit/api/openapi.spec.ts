import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildOpenApiDocument, renderOpenApi } from '../../../apps/api/openapi/openapi-document';
import { createApiApp, TestApi } from '../../utils/api-app';

const ROOT = join(__dirname, '..', '..', '..');
const DOC_PATH = join(ROOT, 'docs', 'openapi.json');
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Every `| METHOD | \`path\` |` row of the route tables of docs/api-reference.md, as
 * `METHOD /path/{}` (parameter names dropped). A cell may hold several methods (`GET/POST`) and
 * several paths (`/a/{p}/pause`, `…/unpause` = a sibling of the previous path).
 */
function referenceRoutes(markdown: string): string[] {
  const out: string[] = [];
  for (const line of markdown.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4) continue;
    const methods = cells[1].split('/');
    if (!methods.every((m) => METHODS.includes(m))) continue;
    let previous = '';
    for (const spelled of [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1])) {
      const full = spelled.startsWith('…/') ? previous.replace(/\/[^/]+$/, spelled.slice(1)) : spelled;
      previous = full;
      for (const m of methods) out.push(`${m} ${normalize(full)}`);
    }
  }
  return out;
}

const normalize = (p: string) => p.replace(/\{[^}]+\}/g, '{}');

function documentRoutes(doc: Record<string, any>): Set<string> {
  const out = new Set<string>();
  for (const [p, ops] of Object.entries<Record<string, unknown>>(doc.paths)) for (const m of Object.keys(ops)) out.add(`${m.toUpperCase()} ${normalize(p)}`);
  return out;
}

const checkedIn = () => JSON.parse(readFileSync(DOC_PATH, 'utf8')) as Record<string, any>;

describe('OpenAPI document (docs/openapi.json)', () => {
  it('is what the code generates (else: run npm run docs:openapi)', async () => {
    const fresh = renderOpenApi(await buildOpenApiDocument());
    const current = readFileSync(DOC_PATH, 'utf8');
    if (fresh !== current) throw new Error('docs/openapi.json is out of date: run npm run docs:openapi');
    expect(current).toBe(fresh);
  });

  it('validates as OpenAPI 3 (@apidevtools/swagger-parser, an ES module: run by Node, not jest)', async () => {
    expect(checkedIn().openapi).toMatch(/^3\./);
    const out = await new Promise<{ code: number; text: string }>((resolve) => {
      execFile(process.execPath, [join(ROOT, 'scripts', 'gen-openapi.js'), '--validate'], { cwd: ROOT }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, text: stdout + stderr }),
      );
    });
    expect(out).toEqual({ code: 0, text: 'docs/openapi.json is valid OpenAPI\n' });
  });

  it('lints clean with Spectral (spectral:oas, .spectral.yaml; no finding of any severity)', async () => {
    const out = await new Promise<{ code: number; text: string }>((resolve) => {
      execFile(join(ROOT, 'node_modules', '.bin', 'spectral'), ['lint', 'docs/openapi.json', '--fail-severity', 'hint'], { cwd: ROOT }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, text: (stdout + stderr).trim() }),
      );
    });
    expect(out).toEqual({ code: 0, text: "No results with a severity of 'hint' or higher found!" });
  });

  it('covers every route docs/api-reference.md lists', () => {
    const listed = referenceRoutes(readFileSync(join(ROOT, 'docs', 'api-reference.md'), 'utf8'));
    expect(listed.length).toBeGreaterThan(50);
    expect(listed).toEqual(expect.arrayContaining(['GET /api/openapi.json', 'POST /api/projects/{}/tasks/{}/unpause', 'POST /api/v1/admin/self-update']));
    const have = documentRoutes(checkedIn());
    expect(listed.filter((r) => !have.has(r))).toEqual([]);
  });

  it('describes the task create body from the DTO rules and the main answers', () => {
    const doc = checkedIn();
    const create = doc.paths['/api/v1/tasks'].post;
    expect(create.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateTaskDto' });
    const body = doc.components.schemas.CreateTaskDto;
    expect(body.required).toEqual(['project_id', 'task_id', 'agent_type', 'prompt']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties).toMatchObject({ max_tokens: { type: 'integer' }, max_cost_usd: { type: 'number' }, depends_on: { type: 'array', items: { type: 'string' } } });
    expect(create.responses['201'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateTaskResponse' });
    expect(doc.paths['/api/v1/health'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/runs/{r}/stream'].get.responses['200'].content).toHaveProperty(['text/event-stream']);
  });

  it('the referenceRoutes parser reads methods, several paths and sibling paths', () => {
    const md = ['| Method | Path | Answer |', '|---|---|---|', '| GET/POST | `/api/a/{x}` | y |', '| POST | `/api/p/{p}/pause`, `…/unpause` | z |', '| 400 | `BAD_REQUEST` |'].join('\n');
    expect(referenceRoutes(md)).toEqual(['GET /api/a/{}', 'POST /api/a/{}', 'POST /api/p/{}/pause', 'POST /api/p/{}/unpause']);
  });
});

describe('GET /api/openapi.json', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createApiApp({ apiKey: 'k-openapi' });
  });
  afterAll(() => api.close());

  it('serves the checked-in document, behind the API key', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { authorization: 'Bearer k-openapi' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe(readFileSync(DOC_PATH, 'utf8'));
    const anonymous = await api.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('ships with the package (docs/ is in package.json "files")', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).files).toContain('docs/');
  });
});

describe('the server does not load the OpenAPI generator', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const full = join(dir, n);
      return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
    });

  it('no server or lib source imports @nestjs/swagger or apps/api/openapi', () => {
    const offenders = [...files(join(ROOT, 'apps', 'api', 'src')), ...files(join(ROOT, 'apps', 'cli', 'src')), ...files(join(ROOT, 'libs'))]
      .filter((f) => /['"]@nestjs\/swagger|['"][./]*openapi\//.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
