/**
 * One string as every detector sees it — its tokens and lexemes, computed once — and what a
 * detector reports: a policy, the character range to redact, and the value in its normalised
 * written form (for numbering and masking; never returned to a caller).
 */
import type { RedactionPolicy } from '@murmur/contract';
import { lexemesOf, type Lexeme } from './lexemes';
import { isNumberOrLetterWord } from './spoken-numbers';
import { tokenize, type Token } from './tokens';

export interface Found {
  policy: RedactionPolicy;
  /** [start, end) in the scanned string. */
  start: number;
  end: number;
  value: string;
}

const CUE_WORDS = new Map<string, string[]>();
function cueWords(cue: string): string[] {
  let words = CUE_WORDS.get(cue);
  if (!words) CUE_WORDS.set(cue, (words = cue.split(' ')));
  return words;
}

export class Scan {
  readonly tokens: Token[];
  readonly lexemes: Lexeme[];
  /** Every token's `norm`, for the spoken-number parsers. */
  readonly words: string[];
  private readonly memos = new Map<string, unknown>();

  constructor(readonly text: string) {
    this.tokens = tokenize(text, isNumberOrLetterWord);
    this.words = this.tokens.map((t) => t.norm);
    this.lexemes = lexemesOf(this.tokens);
  }

  /** A finding over tokens `first`–`last` (their cores, not the punctuation around them). */
  found(policy: RedactionPolicy, first: number, last: number, value: string): Found {
    return { policy, start: this.tokens[first]!.start, end: this.tokens[last]!.end, value };
  }

  /** `make()` computed once per scan (what several detectors share). */
  memo<T>(key: string, make: () => T): T {
    if (!this.memos.has(key)) this.memos.set(key, make());
    return this.memos.get(key) as T;
  }

  /** Whether one of `cues` (words or phrases, lower case) ends within `window` tokens before token `at`. */
  cueBefore(at: number, cues: readonly string[], window: number): boolean {
    const from = Math.max(0, at - window);
    return cues.some((cue) => {
      const words = cueWords(cue);
      for (let end = at; end - words.length >= from; end--) {
        if (words.every((w, k) => this.words[end - words.length + k] === w)) return true;
      }
      return false;
    });
  }
}
