/**
 * The prompt template of an HTTP trigger (docs/triggers.md): `{{payload}}` is the whole JSON
 * payload, `{{payload.a.b}}` / `{{payload.items.0}}` one value in it. A string is inserted as is,
 * anything else as JSON; a missing value is empty. Substitution is one pass over the template only
 * (a value containing `{{…}}` is never expanded), control characters other than newline and tab are
 * dropped, and each value is cut at MAX_VALUE_CHARS.
 */
export const MAX_VALUE_CHARS = 8000;
const PLACEHOLDER = /\{\{\s*(payload(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

function lookup(payload: unknown, path: string[]): unknown {
  let cur = payload;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const clean = text.replace(CONTROL, '');
  return clean.length > MAX_VALUE_CHARS ? `${clean.slice(0, MAX_VALUE_CHARS)}…` : clean;
}

export function renderPrompt(template: string, payload: unknown): string {
  return template.replace(PLACEHOLDER, (_m, expr: string) => show(lookup(payload, expr.split('.').slice(1))));
}
