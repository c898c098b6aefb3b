/** Go's time.RFC3339Nano for a Date: fractional seconds with trailing zeros removed. */
export function rfc3339Nano(d: Date): string {
  return d.toISOString().replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : 'Z'));
}

/** RFC3339Nano from a nanosecond epoch (fs.statSync(..., { bigint: true }).mtimeNs). */
export function rfc3339NanoFromNs(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return frac ? `${base}.${frac}Z` : `${base}Z`;
}
