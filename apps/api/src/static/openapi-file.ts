import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { packageRoot } from './static-ui';

/**
 * The checked-in OpenAPI document (docs/openapi.json of the package, in package.json "files"),
 * read on request; undefined when the package has none.
 */
export async function readOpenApiDocument(): Promise<string | undefined> {
  const root = packageRoot();
  if (!root) return undefined;
  try {
    return await readFile(path.join(root, 'docs', 'openapi.json'), 'utf8');
  } catch {
    return undefined;
  }
}
