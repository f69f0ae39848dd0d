/**
 * A string as the detectors read it: whitespace-separated tokens with their offsets, each with
 * its core (the token less the quotes and punctuation around it) and that core lower-cased.
 * Redaction replaces character ranges of the string, so every token keeps where it came from.
 */

export interface Token {
  /** Offsets of the core in the scanned string: [start, end). */
  start: number;
  end: number;
  /** The token without surrounding quotes, brackets and trailing punctuation. */
  core: string;
  /** `core` lower-cased: the form the spoken-word tables are keyed by. */
  norm: string;
  /** The token closed a sentence (. ? ! or ;): a spoken number never runs on past it. */
  endsSentence: boolean;
}

const LEADING = /^["'“‘«\[{]+/;
const TRAILING = /["'”’»\]}.,;:!?]+$/;
/** Hyphenated number or letter words ("twenty-five", "five-five-five") are read word by word. */
const HYPHENATED_WORDS = /^[a-z]+(?:-[a-z]+)+$/;

/**
 * The tokens of `text`. `splittable` says which hyphen-joined parts may be read as separate
 * tokens (spoken number words); other hyphenated tokens stay whole.
 */
export function tokenize(text: string, splittable: (part: string) => boolean): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    const raw = m[0];
    let start = m.index;
    let end = start + raw.length;
    // Most tokens are plain words: no punctuation to look for.
    const plain = /^[A-Za-z0-9]/.test(raw) && /[A-Za-z0-9]$/.test(raw);
    const lead = plain ? 0 : (LEADING.exec(raw)?.[0].length ?? 0);
    const trail = plain ? '' : (TRAILING.exec(raw.slice(lead))?.[0] ?? '');
    start += lead;
    end -= trail.length;
    let core = text.slice(start, end);
    // Brackets that do not pair inside the token belong to the sentence, not to the value.
    if (core.startsWith('(') && !core.includes(')')) { core = core.slice(1); start += 1; }
    if (core.endsWith(')') && !core.includes('(')) { core = core.slice(0, -1); end -= 1; }
    if (core.length === 0) {
      // A lone "." is a word token of its own in some engines' words ("john", "@", "example", ".", "com").
      if (raw !== '.') continue;
      tokens.push({ start: m.index, end: m.index + 1, core: '.', norm: '.', endsSentence: true });
      continue;
    }
    const norm = core.toLowerCase();
    // A spelled letter ("b.") is not the end of a sentence.
    const endsSentence = /[.;!?]/.test(trail) && !(norm.length === 1 && /^\.$/.test(trail));
    if (norm.includes('-') && HYPHENATED_WORDS.test(norm) && norm.split('-').every(splittable)) {
      let at = start;
      const parts = norm.split('-');
      parts.forEach((part, i) => {
        tokens.push({ start: at, end: at + part.length, core: text.slice(at, at + part.length), norm: part, endsSentence: endsSentence && i === parts.length - 1 });
        at += part.length + 1;
      });
      continue;
    }
    tokens.push({ start, end, core, norm, endsSentence });
  }
  return tokens;
}
