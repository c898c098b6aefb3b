// What a terminal would show after `raw` output: applies the control sequences that log-update
// and the CLI use (CR, LF, cursor up/down/column, erase line/display, colours) to a grid of lines.
// Lines keep no trailing spaces; trailing empty lines are dropped.

// eslint-disable-next-line no-control-regex -- the escape character is what is parsed here
const CSI = /^\u001b\[([?0-9;]*)([A-Za-z])/;

export function screenOf(raw: string, width = 1000): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const at = (r: number) => (lines[r] ??= []);
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '\u001b') {
      const m = CSI.exec(raw.slice(i));
      if (!m) continue;
      i += m[0].length - 1;
      const n = m[1] === '' || m[1].startsWith('?') ? 1 : Number(m[1].split(';')[0]);
      switch (m[2]) {
        case 'A':
          row = Math.max(0, row - n);
          break;
        case 'B':
          row += n;
          break;
        case 'G':
          col = n - 1;
          break;
        case 'K':
          // 2K: whole line; 0K / K: to the end of the line
          if (m[1] === '2') lines[row] = [];
          else at(row).length = Math.min(at(row).length, col);
          break;
        case 'J':
          lines.length = row + 1;
          at(row).length = Math.min(at(row).length, col);
          break;
        default:
          // colours (m), cursor show/hide (h/l) and the like do not change the text
          break;
      }
      continue;
    }
    if (ch === '\r') col = 0;
    else if (ch === '\n') {
      row++;
      col = 0;
    } else {
      if (col >= width) {
        row++;
        col = 0;
      }
      const line = at(row);
      while (line.length < col) line.push(' ');
      line[col++] = ch;
    }
  }
  const text = Array.from({ length: lines.length }, (_, r) => (lines[r] ?? []).join('').trimEnd());
  while (text.length && text[text.length - 1] === '') text.pop();
  return text;
}
