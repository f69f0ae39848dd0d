/**
 * Numbers and letters as recognisers write speech: pocketsphinx gives lower-case words only
 * ("five five five", "nineteen eighty five", "double oh seven", "g b"), whisper and
 * OpenAI-compatible servers mostly digits. These tables and parsers turn the spoken words into
 * the digits a detector validates; they never guess beyond what was said.
 */

export const UNITS: Readonly<Record<string, number>> = {
  zero: 0, oh: 0, o: 0, nought: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
};
const TEENS: Readonly<Record<string, number>> = {
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = {
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90,
};
const REPEATS: Readonly<Record<string, number>> = { double: 2, triple: 3 };
const ORDINAL_UNITS: Readonly<Record<string, number>> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9,
};
const ORDINALS: Readonly<Record<string, number>> = {
  ...ORDINAL_UNITS, tenth: 10, eleventh: 11, twelfth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16,
  seventeenth: 17, eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
};
/**
 * Homophones recognisers write for digits ("five to one", "one for five"): read as digits only
 * between two digit words, where the ordinary word makes no sense.
 */
export const DIGIT_HOMOPHONES: Readonly<Record<string, number>> = { to: 2, too: 2, for: 4 };

/** Letters as spoken words; ambiguous ones ("see", "you", "are", "why", "be") are left out. */
export const LETTER_NAMES: Readonly<Record<string, string>> = {
  bee: 'b', cee: 'c', dee: 'd', gee: 'g', jay: 'j', kay: 'k', pee: 'p', tee: 't', vee: 'v',
  zed: 'z', zee: 'z', aitch: 'h', eff: 'f', ess: 's', em: 'm', en: 'n', el: 'l', ex: 'x',
};

/** Any word these tables know (hyphenated runs of them are split into words). */
export function isNumberOrLetterWord(word: string): boolean {
  return word in UNITS || word in TEENS || word in TENS || word in REPEATS || word in ORDINALS || word in LETTER_NAMES
    || word === 'hundred' || word === 'thousand' || /^[a-z]$/.test(word);
}

/** One spoken number: its digits as said ("oh five" is two numbers, "twenty five" one). */
export interface SpokenNumber {
  digits: string;
  value: number;
  /** Index after the last word used. */
  end: number;
}

function below100(words: readonly string[], i: number): SpokenNumber | null {
  const w = words[i];
  if (w === undefined) return null;
  const teen = TEENS[w];
  if (teen !== undefined) return { digits: String(teen), value: teen, end: i + 1 };
  const tens = TENS[w];
  if (tens !== undefined) {
    const unit = UNITS[words[i + 1] ?? ''];
    if (unit !== undefined && unit > 0) {
      return { digits: String(tens + unit), value: tens + unit, end: i + 2 };
    }
    return { digits: String(tens), value: tens, end: i + 1 };
  }
  return null;
}

/**
 * After "N hundred": the rest of the number, only when it cannot be a digit of its own —
 * "one hundred ninety two" is 192, "eight hundred five five five" is 800 then 5, 5, 5.
 */
function hundredsRest(words: readonly string[], i: number): SpokenNumber | null {
  if (words[i] === 'and') {
    const rest = below100(words, i + 1);
    if (rest) return rest;
    const unit = UNITS[words[i + 1] ?? ''];
    return unit !== undefined && unit > 0 ? { digits: String(unit), value: unit, end: i + 2 } : null;
  }
  return below100(words, i);
}

function withHundreds(lead: number, words: readonly string[], i: number): SpokenNumber {
  const rest = hundredsRest(words, i);
  const value = lead * 100 + (rest?.value ?? 0);
  return { digits: String(value), value, end: rest?.end ?? i };
}

/** After "N thousand [and]": "five hundred [and] M", "twenty four" or "five" (2005 as a year is said so). */
function thousandsRest(words: readonly string[], j: number): SpokenNumber | null {
  const lead = UNITS[words[j] ?? ''];
  if (lead !== undefined && lead > 0 && words[j + 1] === 'hundred') return withHundreds(lead, words, j + 2);
  const rest = below100(words, j);
  if (rest) return rest;
  return lead !== undefined && lead > 0 ? { digits: String(lead), value: lead, end: j + 1 } : null;
}

/**
 * The number spoken at `words[i]`, or null: a digit ("five", "oh"), a teen or tens with its
 * unit ("twenty five"), "N hundred [and] M", "N thousand [and] M", "double/triple D".
 */
export function spokenNumberAt(words: readonly string[], i: number): SpokenNumber | null {
  const w = words[i];
  if (w === undefined) return null;
  const times = REPEATS[w];
  if (times !== undefined) {
    const unit = UNITS[words[i + 1] ?? ''];
    return unit === undefined ? null : { digits: String(unit).repeat(times), value: unit, end: i + 2 };
  }
  const unit = UNITS[w];
  if (unit !== undefined) {
    if (unit > 0 && words[i + 1] === 'hundred') return withHundreds(unit, words, i + 2);
    if (unit > 0 && words[i + 1] === 'thousand') {
      const rest = thousandsRest(words, words[i + 2] === 'and' ? i + 3 : i + 2);
      const value = unit * 1000 + (rest?.value ?? 0);
      return { digits: String(value), value, end: rest?.end ?? i + 2 };
    }
    return { digits: String(unit), value: unit, end: i + 1 };
  }
  const small = below100(words, i);
  if (small && small.value < 20 && words[small.end] === 'hundred') return withHundreds(small.value, words, small.end + 1);
  return small;
}

/** An ordinal day ("fifteenth", "twenty first", "thirty-first" split into two words), or null. */
export function spokenOrdinalAt(words: readonly string[], i: number): { value: number; end: number } | null {
  const w = words[i] ?? '';
  const tens = TENS[w];
  const unit = ORDINAL_UNITS[words[i + 1] ?? ''];
  if (tens !== undefined && unit !== undefined) return { value: tens + unit, end: i + 2 };
  const ordinal = ORDINALS[w];
  return ordinal === undefined ? null : { value: ordinal, end: i + 1 };
}
