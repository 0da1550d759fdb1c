/** Width in characters (code points), as Rust's `{:<width$}` padding counts. */
export function charWidth(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function padRight(text: string, width: number): string {
  const w = charWidth(text);
  return w >= width ? text : text + ' '.repeat(width - w);
}

/**
 * Left-aligned columns separated by one space, each padded to the widest of its
 * header and cells; the last column is not padded. Every line ends with `\n`.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const last = headers.length - 1;
  const widths = headers.map((h, i) => (i === last ? 0 : Math.max(charWidth(h), ...rows.map((r) => charWidth(r[i] ?? '')))));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === last ? c : padRight(c, widths[i]!))).join(' ') + '\n';
  return line(headers) + rows.map(line).join('');
}
