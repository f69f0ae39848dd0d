/**
 * Tokens read as what they stand for in a spoken or written value: numbers (spoken words or
 * written digits), spelled letters, the symbols of addresses ("at", "dot", "underscore", …),
 * and plain words. A lexeme covers one or more tokens (`first`–`last`): "twenty five" is one
 * number, as is "555-123-4567".
 */
import type { Token } from './tokens';
import { DIGIT_HOMOPHONES, LETTER_NAMES, spokenNumberAt, UNITS } from './spoken-numbers';

interface Span {
  /** Index of the first and the last token of the lexeme. */
  first: number;
  last: number;
}

export interface NumLexeme extends Span {
  kind: 'num';
  digits: string;
  /** The number's value when it has at most four digits (NaN beyond): what counting is judged by. */
  value: number;
  /** Digit-group lengths as written ("123-45-6789" → 3, 2, 4); null when spoken. */
  groups: number[] | null;
  /** Written with a leading "+". */
  plus: boolean;
}

export interface LetterLexeme extends Span {
  kind: 'letter';
  /** Lower case. */
  char: string;
}

export type SymbolChar = '@' | '.' | '_' | '-' | '+';

export interface SymbolLexeme extends Span {
  kind: 'sym';
  char: SymbolChar;
}

export interface WordLexeme extends Span {
  kind: 'word';
  /**
   * The token as the characters of a written code (upper case) when it can be part of one: it
   * mixes letters and digits ("GB82", "AB123456C") or is an upper-case group ("WEST").
   */
  code: string | null;
}

export type Lexeme = NumLexeme | LetterLexeme | SymbolLexeme | WordLexeme;

const SPOKEN_SYMBOLS: Readonly<Record<string, SymbolChar>> = {
  at: '@', '@': '@', dot: '.', '.': '.', underscore: '_', _: '_', dash: '-', hyphen: '-', '-': '-', plus: '+', '+': '+',
};
/** Digits as written: 5551234567, 555-123-4567, (555) 123-4567, +44 20 7946 0958, 555.123.4567. */
const WRITTEN_NUMBER = /^\+?(?:\(\d{1,4}\)|\d+)(?:-?(?:\(\d{1,4}\)|\d+))*$/;
const DOTTED_PHONE = /^\d{3}\.\d{3}\.\d{4}$/;

function writtenNumber(core: string, at: number): NumLexeme | null {
  if (!WRITTEN_NUMBER.test(core) && !DOTTED_PHONE.test(core)) return null;
  const groups = core.match(/\d+/g)!;
  const digits = groups.join('');
  return {
    kind: 'num', first: at, last: at, digits, value: digits.length <= 4 ? Number(digits) : NaN,
    groups: groups.map((g) => g.length), plus: core.startsWith('+'),
  };
}

function codeOf(core: string): string | null {
  if (core === core.toLowerCase() && !/[0-9]/.test(core)) return null;
  if (!/^[A-Za-z0-9]+$/.test(core)) return null;
  const mixed = /[0-9]/.test(core) && /[A-Za-z]/.test(core);
  return mixed || (core.length >= 2 && /^[A-Z]+$/.test(core)) ? core.toUpperCase() : null;
}

/** The lexemes of `tokens`, in order, covering every token once. */
export function lexemesOf(tokens: readonly Token[]): Lexeme[] {
  const words = tokens.map((t) => t.norm);
  const out: Lexeme[] = [];
  let written: NumLexeme | null;
  for (let i = 0; i < tokens.length; ) {
    const token = tokens[i]!;
    const w = token.norm;
    const spoken = spokenNumberAt(words, i);
    if (spoken) {
      // A number never runs past the end of a sentence.
      let end = spoken.end;
      for (let k = i; k < end - 1; k++) if (tokens[k]!.endsSentence) { end = k + 1; break; }
      const digits = end === spoken.end ? spoken.digits : spokenNumberAt(words.slice(i, end), 0)!.digits;
      out.push({ kind: 'num', first: i, last: end - 1, digits, value: digits.length <= 4 ? Number(digits) : NaN, groups: null, plus: false });
      i = end;
      continue;
    }
    const homophone = DIGIT_HOMOPHONES[w];
    if (homophone !== undefined && (words[i - 1] ?? '') in UNITS && (words[i + 1] ?? '') in UNITS && !tokens[i - 1]!.endsSentence && !token.endsSentence) {
      out.push({ kind: 'num', first: i, last: i, digits: String(homophone), value: homophone, groups: null, plus: false });
    } else if (/^[0-9+(]/.test(w) && (written = writtenNumber(token.core, i)) !== null) {
      out.push(written);
    } else if (/^[a-z]$/.test(w) || w in LETTER_NAMES) {
      out.push({ kind: 'letter', first: i, last: i, char: LETTER_NAMES[w] ?? w });
    } else if (SPOKEN_SYMBOLS[w] !== undefined) {
      out.push({ kind: 'sym', first: i, last: i, char: SPOKEN_SYMBOLS[w]! });
    } else {
      out.push({ kind: 'word', first: i, last: i, code: codeOf(token.core) });
    }
    i += 1;
  }
  return out;
}
