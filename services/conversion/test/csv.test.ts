/** RFC 4180 CSV: what is quoted, how, and that every table reads back as it was written. */
import { csvField, parseCsv, toCsv } from '../src/csv';

describe('csvField', () => {
  it.each([
    ['plain words', 'Send the deck', 'Send the deck'],
    ['an empty cell', '', ''],
    ['a comma', 'Dana, Marco', '"Dana, Marco"'],
    ['double quotes, doubled', 'the "v2" mocks', '"the ""v2"" mocks"'],
    ['a line feed', 'line one\nline two', '"line one\nline two"'],
    ['a carriage return', 'a\rb', '"a\rb"'],
    ['only a quote', '"', '""""'],
    ['leading and trailing spaces, kept', '  padded  ', '  padded  '],
    ['a formula, guarded', '=SUM(A1:A3)', "'=SUM(A1:A3)"],
    ['a plus sign, guarded', '+1 555 0100', "'+1 555 0100"],
    ['an at sign, guarded', '@channel', "'@channel"],
    ['a minus sign, left alone', '-5 percent', '-5 percent'],
    ['a guarded formula with a comma, guarded and quoted', '=A1,B1', `"'=A1,B1"`],
    ['unicode', 'Grüße 🎙', 'Grüße 🎙'],
  ])('writes %s', (_name, value, expected) => {
    expect(csvField(value)).toBe(expected);
  });
});

describe('toCsv', () => {
  it('separates records with CRLF and ends the last one', () => {
    expect(toCsv([['Owner', 'Task'], ['Dana', 'Send mocks']])).toBe('Owner,Task\r\nDana,Send mocks\r\n');
  });

  it('writes nothing for no records', () => {
    expect(toCsv([])).toBe('');
  });
});

describe('parseCsv', () => {
  it.each([
    ['CRLF records', 'a,b\r\nc,d\r\n', [['a', 'b'], ['c', 'd']]],
    ['LF records', 'a,b\nc,d\n', [['a', 'b'], ['c', 'd']]],
    ['no final line break', 'a,b\r\nc,d', [['a', 'b'], ['c', 'd']]],
    ['quoted commas, quotes and line breaks', '"x, y","say ""hi""","1\r\n2"\r\n', [['x, y', 'say "hi"', '1\r\n2']]],
    ['empty fields', ',,\r\n', [['', '', '']]],
    ['an empty quoted field', '""\r\n', [['']]],
  ])('reads %s', (_name, text, rows) => {
    expect(parseCsv(text)).toEqual(rows);
  });

  it.each([
    ['a quote inside an unquoted field', 'ab"c\r\n'],
    ['an unterminated quoted field', '"abc\r\n'],
    ['text after a closing quote', '"ab"c\r\n'],
  ])('rejects %s', (_name, text) => {
    expect(() => parseCsv(text)).toThrow(/CSV/);
  });

  it('reads back every table it writes', () => {
    const tables: string[][][] = [
      [['Owner', 'Task', 'Due'], ['Dana', 'Send the "v2" mocks, then call', '2026-01-16'], ['Team', 'Decide\non call', '']],
      [['#', 'Key point'], ['1', ' spaced '], ['2', ',']],
      [['only']],
      [[''], ['', '']],
    ];
    for (const rows of tables) expect(parseCsv(toCsv(rows))).toEqual(rows);
  });
});
