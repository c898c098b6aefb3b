import { describeMismatches, openApiMismatches, settleOpenApiChecks } from './openapi-traffic';

// jest setupFilesAfterEnv: a test file whose API traffic does not match docs/openapi.json fails here
// (test/utils/openapi-traffic.ts says what is checked).
afterAll(async () => {
  await settleOpenApiChecks();
  if (openApiMismatches.length) throw new Error(`API traffic that does not match docs/openapi.json:\n${describeMismatches(openApiMismatches)}`);
});
