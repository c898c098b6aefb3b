/**
 * Foreign bytes (issue #31): bytes that our writer (and upstream's, for text bodies) never leaves
 * at the end of an interrupted write. An interrupted write leaves a prefix of valid UTF-8 text (at
 * worst a multi-byte character cut at the very end); a foreign or broken writer leaves binary: a
 * NUL or other C0 control byte (tab, CR and ESC excepted: agents' output has them) or a byte
 * sequence that is not UTF-8. A complete record followed by such a tail stays readable.
 */
function isControl(b: number): boolean {
  return (b < 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x1b && b !== 0x0a) || b === 0x7f;
}

/** True when buf[start, end) holds a foreign byte (see above); a UTF-8 character cut at `end` is not one. */
export function isForeign(buf: Buffer, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    const b = buf[i];
    if (b < 0x80) {
      if (isControl(b)) return true;
      i++;
      continue;
    }
    const need = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0) return true;
    for (let k = 1; k <= need; k++) {
      if (i + k >= end) return false; // cut at the end: what a torn write leaves
      if ((buf[i + k] & 0xc0) !== 0x80) return true;
    }
    i += need + 1;
  }
  return false;
}

/** Start of the file's unterminated last line when it is foreign, else -1 (`data` = a tail window). */
export function foreignTailStart(data: Buffer): number {
  if (data.length === 0 || data[data.length - 1] === 0x0a) return -1;
  const from = data.lastIndexOf(0x0a) + 1;
  return isForeign(data, from, data.length) ? from : -1;
}
