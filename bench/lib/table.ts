/**
 * Formats rows as a plain-text table, columns as wide as their widest cell: the first
 * `labelColumns` left-aligned (names), the rest right-aligned (figures, so digits line up).
 */
export function formatTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  labelColumns = 1,
): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        return column < labelColumns ? cell.padEnd(width) : cell.padStart(width);
      })
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** `12345.6` → `12,346`. */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Milliseconds with one decimal. */
export function formatMs(value: number): string {
  return value.toFixed(1);
}
