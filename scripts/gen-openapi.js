#!/usr/bin/env node
'use strict';
// Generates docs/openapi.json (served at /api/openapi.json) from the API's controllers and DTOs:
// apps/api/openapi/openapi-document.ts, loaded from the TypeScript sources (no build needed).
//   node scripts/gen-openapi.js           write docs/openapi.json
//   node scripts/gen-openapi.js --check   exit 1 when docs/openapi.json differs (drift)
//   node scripts/gen-openapi.js --validate   validate docs/openapi.json only (@apidevtools/swagger-parser)
// A generated document is validated before it is written.
const fs = require('node:fs');
const path = require('node:path');
require('./openapi/register-ts');

const DOC = path.join(__dirname, '..', 'docs', 'openapi.json');

/** Throws with the validator's message when the document is not valid OpenAPI. */
async function validate(doc) {
  const SwaggerParser = require('@apidevtools/swagger-parser'); // an ES module: Node's require(esm)
  await (SwaggerParser.default ?? SwaggerParser).validate(JSON.parse(JSON.stringify(doc)));
}

async function main() {
  if (process.argv.includes('--validate')) {
    await validate(JSON.parse(fs.readFileSync(DOC, 'utf8')));
    console.log('docs/openapi.json is valid OpenAPI');
    return;
  }
  process.env.NODE_ENV = process.env.NODE_ENV || 'production';
  const { buildOpenApiDocument, renderOpenApi } = require('../apps/api/openapi/openapi-document.ts');
  const doc = await buildOpenApiDocument();
  await validate(doc);
  const text = renderOpenApi(doc);
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(DOC) ? fs.readFileSync(DOC, 'utf8') : '';
    if (current !== text) {
      console.error('docs/openapi.json is out of date: run npm run docs:openapi');
      process.exit(1);
    }
    console.log('docs/openapi.json is current');
    return;
  }
  fs.writeFileSync(DOC, text);
  console.log(`wrote ${path.relative(process.cwd(), DOC)} (${Object.keys(JSON.parse(text).paths).length} paths)`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`Error: ${err.message}`);
    process.exit(1);
  },
);
