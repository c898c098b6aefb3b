/**
 * The one rule for what may reach a `git` argv as a ref or a remote, wherever it came from (a flag,
 * an API field, the config, a record): not empty, not an option (`-…`), no whitespace or control
 * characters; a ref also no `..` range. Callers still pass values after `--end-of-options`.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\s\u0000-\u001f\u007f]/;

export function isSafeGitRef(value: string): boolean {
  return value !== '' && !value.startsWith('-') && !UNSAFE.test(value) && !value.includes('..') && value.length <= 256;
}

/** A git remote (a name or a URL): the value, or an Error with one line. */
export function checkGitRemote(value: string): string {
  if (value === '' || value.startsWith('-') || UNSAFE.test(value) || value.length > 1024) throw new Error(`must be a git remote name or URL, got ${JSON.stringify(value).slice(0, 120)}`);
  return value;
}
