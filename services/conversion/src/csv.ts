/**
 * CSV as RFC 4180 writes it: fields separated by commas, records by CRLF; a field holding a
 * comma, a double quote, CR or LF is enclosed in double quotes with inner quotes doubled.
 * A cell that a spreadsheet would run as a formula (=, +, @, tab or CR first) is prefixed
 * with an apostrophe, the OWASP guard against CSV injection; "-" is left alone because
 * "-5 percent" is ordinary speech. {@link parseCsv} reads the same dialect back.
 */

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+@\t\r]/;

/** One field, quoted when it has to be. */
export function csvField(value: string): string {
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** Records to CSV text: CRLF between records and after the last one. */
export function toCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvField).join(',')).join('\r\n') + (rows.length > 0 ? '\r\n' : '');
}

/**
 * Parses RFC 4180 CSV (CRLF or LF line ends, quoted fields with doubled quotes and embedded
 * line breaks). Throws on a quote inside an unquoted field or an unterminated quoted field.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  let fieldStarted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        if (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') throw new Error(`CSV: text after a closing quote at ${i}`);
        continue;
      }
      field += c;
      i += 1;
      continue;
    }
    if (c === '"') {
      if (fieldStarted) throw new Error(`CSV: quote inside an unquoted field at ${i}`);
      quoted = true;
      fieldStarted = true;
      i += 1;
    } else if (c === ',') {
      row.push(field);
      field = '';
      fieldStarted = false;
      i += 1;
    } else if (c === '\r' || c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      fieldStarted = false;
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      fieldStarted = true;
      i += 1;
    }
  }
  if (quoted) throw new Error('CSV: unterminated quoted field');
  if (fieldStarted || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
