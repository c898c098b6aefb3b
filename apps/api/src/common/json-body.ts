import type { FastifyInstance } from 'fastify';
import { ApiError } from './api-error';

/** Deepest nesting of arrays/objects a request body may have; our bodies need 3. */
export const MAX_JSON_DEPTH = 32;

/** Nesting depth of a JSON text, counted outside strings; stops early past `limit`. */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

const RAW_BODY = Symbol('rawBody');

/** The JSON body exactly as received (a signed webhook is checked against these bytes). */
export function rawBodyOf(req: object): string | undefined {
  return (req as { [RAW_BODY]?: string })[RAW_BODY];
}

/**
 * Replaces Fastify's JSON parser with the same parser (prototype-poisoning protection included)
 * behind a depth check: a deeply nested body is a 400, not a stack overflow deeper in validation.
 */
export function installJsonBodyParser(fastify: FastifyInstance): void {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (jsonDepth(body as string, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      done(new ApiError('BAD_REQUEST', `invalid json: nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    (req as { [RAW_BODY]?: string })[RAW_BODY] = body as string;
    parse(req, body as string, done);
  });
}
