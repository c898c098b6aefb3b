import { z } from 'zod';
import { CURSOR_PAGE_DEFAULT, CURSOR_PAGE_MAX, PageQueryError, parsePageQuery, type PageQuery } from '@app/storage';
import { McpInputError } from './tool-result';

/** `limit` / `after` of a listing tool (the API's paging rule, issue #29). */
export interface PageArgs {
  limit?: number;
  after?: string;
}

export const PAGE_HELP = `One page: \`limit\` items (default ${CURSOR_PAGE_DEFAULT}, at most ${CURSOR_PAGE_MAX}); while \`has_more\`, call again with \`after: next_cursor\`.`;

export const pageArgs = {
  limit: z.number().optional().describe(`page size (default ${CURSOR_PAGE_DEFAULT}, at most ${CURSOR_PAGE_MAX})`),
  after: z.string().optional().describe('the next_cursor of the previous page'),
};

export const pageOutput = {
  has_more: z.boolean().describe('more follow: call again with after: next_cursor'),
  next_cursor: z.string().optional(),
};

/** The shared paging rule on a tool's arguments; a bad value is a tool error with the API's one line. */
export function pageArgsQuery(args: PageArgs, validCursor: (cursor: string) => boolean): PageQuery {
  try {
    return parsePageQuery(args.limit, args.after, validCursor);
  } catch (err) {
    if (err instanceof PageQueryError) throw new McpInputError(err.message);
    throw err;
  }
}
