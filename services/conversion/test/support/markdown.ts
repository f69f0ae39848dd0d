/** Reading Markdown back in tests: tables (strictly) and escaped text. */

/** Splits a table line into cells on unescaped pipes. */
function cellsOf(line: string): string[] {
  if (!line.startsWith('|') || !line.endsWith('|')) throw new Error(`table line does not start and end with "|": ${line}`);
  const cells: string[] = [];
  let cell = '';
  for (let i = 1; i < line.length - 1; i += 1) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length - 1) {
      cell += c + line[i + 1]!;
      i += 1;
    } else if (c === '|') {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells.map((c) => c.trim());
}

/** Removes Markdown backslash escapes. */
export function unescapeMarkdown(text: string): string {
  return text.replace(/\\([\\`*_[\]<>|#+\-.])/g, '$1');
}

/**
 * Parses the one table in `markdown`, throwing unless it is well formed: a header, a
 * separator row of `---` cells, and every row with the header's column count.
 */
export function parseMarkdownTable(markdown: string): { header: string[]; rows: string[][] } {
  const lines = markdown.split('\n').filter((l) => l.startsWith('|'));
  if (lines.length < 2) throw new Error('no table');
  const [headerLine, separatorLine, ...rowLines] = lines as [string, string, ...string[]];
  const header = cellsOf(headerLine);
  const separator = cellsOf(separatorLine);
  if (separator.length !== header.length || !separator.every((c) => /^:?-{3,}:?$/.test(c))) throw new Error(`bad separator row: ${separatorLine}`);
  const rows = rowLines.map((line) => {
    const cells = cellsOf(line);
    if (cells.length !== header.length) throw new Error(`row has ${cells.length} cells, header ${header.length}: ${line}`);
    return cells.map(unescapeMarkdown);
  });
  // A table is one block: no other lines between its rows.
  const first = markdown.split('\n').indexOf(headerLine);
  const block = markdown.split('\n').slice(first, first + lines.length);
  if (block.some((l) => !l.startsWith('|'))) throw new Error('table rows are not contiguous');
  return { header: header.map(unescapeMarkdown), rows };
}
