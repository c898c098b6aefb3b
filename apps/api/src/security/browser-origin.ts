import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error';

/** api.md §3.3: a request "from the web UI" (browser headers present) may not run destructive actions. */
export function isBrowserRequest(req: FastifyRequest): boolean {
  const h = req.headers;
  const header = (name: string) => String(h[name] ?? '').trim();
  return (
    header('x-conductor-client').toLowerCase() === 'web-ui' ||
    header('sec-fetch-mode') !== '' ||
    header('sec-fetch-site') !== '' ||
    header('origin') !== '' ||
    header('referer') !== ''
  );
}

export function refuseBrowser(req: FastifyRequest, action: string): void {
  if (isBrowserRequest(req)) throw new ApiError('FORBIDDEN', `${action} is disabled in the web UI`);
}
