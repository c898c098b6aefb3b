import * as path from 'node:path';
import { ApiError } from '../common/api-error';

/** Root confinement (api.md §3.4.2): `target` must resolve inside `root` (lexically), else 403 `<field> escapes configured root`. */
export function confine(root: string, target: string, field: string): string {
  const resolved = path.resolve(target);
  const rel = path.relative(path.resolve(root), resolved);
  if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) return resolved;
  throw new ApiError('FORBIDDEN', `${field} escapes configured root`);
}
