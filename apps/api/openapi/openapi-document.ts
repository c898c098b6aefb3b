import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_API_HOST, DEFAULT_API_PORT } from '@app/storage';
import { createApiApp } from '../src/server';
import { SelfUpdateDto } from '../src/admin/dto/self-update.dto';
import { PostMessageDto, PostTaskMessageDto, PostV1MessageDto } from '../src/messages/dto/post-message.dto';
import { AnswerDto } from '../src/needs-input/answer.dto';
import { CreateProjectDto } from '../src/projects/dto/create-project.dto';
import { CreateTaskDto, ProcessImportDto, ThreadParentDto } from '../src/tasks/dto/create-task.dto';
import { PullRequestDto } from '../src/triggers/dto/pull-request.dto';
import { dtoSchema, type Schema } from './dto-schemas';
import { OPERATIONS } from './operations';
import { ref, WIRE_SCHEMAS } from './wire-schemas';

/**
 * The OpenAPI document of the REST API (docs/openapi.json, served at /api/openapi.json), generated
 * from the code: @nestjs/swagger walks the controllers of a server built without listening (paths,
 * methods, path/query/header parameters, body DTO classes); request bodies come from the DTOs'
 * validation rules (dto-schemas.ts), answers from wire-schemas.ts (typed against libs/contracts) and
 * operations.ts. Build-time only (`npm run docs:openapi`): the server never loads this or @nestjs/swagger.
 */
export async function buildOpenApiDocument(): Promise<Record<string, any>> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'conductor-openapi-'));
  const app = await createApiApp({ root: tmp, defaultMetrics: false, logger: false, disableTaskStart: true });
  try {
    const config = new DocumentBuilder()
      .setTitle('conductor-loop API')
      .setDescription('REST API of the `conductor` server (docs/api-reference.md). SSE streams are described as text/event-stream answers; their events are in docs/api-reference.md.')
      .setVersion(JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')).version)
      .setLicense('MIT', 'https://opensource.org/licenses/MIT')
      .addServer(`http://${DEFAULT_API_HOST}:${DEFAULT_API_PORT}`, 'default local server')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'the API key' }, 'bearer')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'apiKey')
      .addSecurityRequirements('bearer')
      .addSecurityRequirements('apiKey')
      .build();
    const doc = SwaggerModule.createDocument(app, config) as Record<string, any>;
    return finish(doc);
  } finally {
    await app.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Renders the document as checked in (stable key order from the generator, two-space indent). */
export function renderOpenApi(doc: object): string {
  return JSON.stringify(doc, null, 2) + '\n';
}

/**
 * Error answers every operation can give, all in the error envelope (docs/api-reference.md "Error
 * envelope"): 403 comes from checks in front of every route (a Host not allowed, a request from a
 * browser, a file that is not a regular file inside the runs root); the ranges cover the rest of the
 * envelope's table (405, 409, 413, 415, 422, 429; 500, 507), which operations answer as their inputs
 * and the runs root make them.
 */
const ERROR_ANSWERS: Record<string, string> = {
  '400': 'invalid input',
  '403': 'refused: Host not allowed, a request from a browser, or a file that is not a regular file inside the runs root',
  '404': 'not found',
  '4XX': 'another client error of the error envelope (405, 409, 413, 415, 422, 429)',
  '5XX': 'a server error (500 INTERNAL, 507 INSUFFICIENT_STORAGE on a full disk)',
};

function finish(doc: Record<string, any>): Record<string, any> {
  const schemas: Record<string, Schema> = { ...WIRE_SCHEMAS };
  const nested = new Map<string, Schema>();
  const seen = new Set<string>();
  const tags = new Set<string>();
  for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<Record<string, any>>(ops)) {
      const key = `${method.toUpperCase()} ${p}`;
      const info = OPERATIONS[key];
      if (!info) throw new Error(`apps/api/openapi/operations.ts: no entry for ${key}`);
      seen.add(key);
      op.summary = info.summary;
      for (const param of op.parameters ?? []) {
        if (param.in === 'query') param.required = !!info.requiredQueries?.includes(param.name);
        if (param.in === 'header') param.required = false;
      }
      for (const [name, schema] of Object.entries(info.extraQueries ?? {})) op.parameters.push({ name, in: 'query', required: false, schema });
      const requestBody = op.requestBody?.content?.['application/json']?.schema?.$ref as string | undefined;
      if (requestBody) op.requestBody.required = true;
      const ok = info.ok.media
        ? { description: info.summary, content: Object.fromEntries([info.ok.media].flat().map((m) => [m, { schema: { type: 'string' } }])) }
        : info.ok.schema
          ? { description: info.summary, content: { 'application/json': { schema: info.ok.schema } } }
          : { description: info.summary };
      op.responses = { [String(info.ok.status)]: ok };
      if (info.accepted) op.responses['202'] = info.acceptedWithBody ? { ...ok, description: info.accepted } : { description: info.accepted };
      if (info.jsonBody) op.requestBody = { required: true, content: { 'application/json': { schema: info.jsonBody } } };
      for (const [status, description] of Object.entries(ERROR_ANSWERS)) op.responses[status] = { description, content: { 'application/json': { schema: ref('Error') } } };
      if (info.ownToken) op.responses['401'] = { description: "its own credential missing or wrong (a trigger's bearer token, GitHub's X-Hub-Signature-256)", content: { 'application/json': { schema: ref('Unauthorized') } } };
      if (info.open) op.security = [];
      else op.responses['401'] = { description: 'API key missing or wrong', content: { 'application/json': { schema: ref('Unauthorized') } } };
      op.description = `${info.summary}: see docs/api-reference.md.${info.browserBlocked ? ' Refused with 403 when the request looks like it comes from a browser; use the CLI.' : ''}`;
      for (const tag of op.tags ?? []) tags.add(tag);
    }
  }
  const stale = Object.keys(OPERATIONS).filter((k) => !seen.has(k));
  if (stale.length) throw new Error(`apps/api/openapi/operations.ts: no route for ${stale.join(', ')}`);
  for (const name of Object.keys(doc.components?.schemas ?? {})) schemas[name] = dtoSchemaByName(name, nested);
  for (const [name, schema] of nested) schemas[name] = schema;
  doc.components = { ...doc.components, schemas: sortKeys(schemas) };
  doc.tags = [...tags].sort().map((name) => ({ name, description: `the routes of ${name}Controller` }));
  return doc;
}

/** Request DTOs by class name (the names @nestjs/swagger gave the body schemas). */
function dtoSchemaByName(name: string, nested: Map<string, Schema>): Schema {
  const dto = DTOS[name];
  if (!dto) throw new Error(`apps/api/openapi/openapi-document.ts: unknown body DTO ${name}`);
  return dtoSchema(dto, nested);
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const DTOS: Record<string, new () => unknown> = { CreateTaskDto, ThreadParentDto, ProcessImportDto, CreateProjectDto, SelfUpdateDto, AnswerDto, PostMessageDto, PostTaskMessageDto, PostV1MessageDto, PullRequestDto };
