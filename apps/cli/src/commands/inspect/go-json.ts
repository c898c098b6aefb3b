/** Go's json.Encoder with SetIndent("", "  "): HTML-sensitive characters escaped, trailing newline. */
export function goJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return `${text}\n`;
}
