/**
 * Left-aligned columns separated by at least two spaces, like Go's
 * tabwriter.NewWriter(out, 0, 0, 2, ' ', 0): the last cell of a line is not padded.
 */
export function formatTable(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  }
  return rows
    .map((row) => row.map((cell, i) => (i < row.length - 1 ? cell + ' '.repeat(widths[i] - [...cell].length + 2) : cell)).join(''))
    .map((line) => `${line}\n`)
    .join('');
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** Local time as `YYYY-MM-DD HH:MM`. */
export function localMinute(date: Date): string {
  return `${date.getFullYear()}-${pad2(date.getMonth() + 1)}-${pad2(date.getDate())} ${pad2(date.getHours())}:${pad2(date.getMinutes())}`;
}

export { rfc3339Seconds as rfc3339, utcSecond } from '@app/runner';
