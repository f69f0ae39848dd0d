/**
 * Letter-and-digit codes, written ("GB82 WEST 1234 5698 7654 32", "AB 12 34 56 C") or spelled
 * out ("g b eight two w e s t one two three four …"): IBANs and UK National Insurance numbers.
 * A code is read from a letter or a written code, across tokens, and must end where a token
 * ends: a value is never cut out of the middle of a longer one.
 */
import { ibanValid, ninoValid } from './checks';
import { IBAN_LENGTHS } from './iban-lengths';
import type { Found, Scan } from './scan';

interface Chunk {
  chars: string;
  /** Last token of the chunk. */
  last: number;
}

/** Up to `max` characters of code from lexeme `k`, one chunk per lexeme. */
function chunksFrom(scan: Scan, k: number, max: number): Chunk[] {
  const chunks: Chunk[] = [];
  let length = 0;
  for (let at = k; length < max; at++) {
    const l = scan.lexemes[at];
    let chars: string | null = null;
    if (l?.kind === 'letter') chars = l.char.toUpperCase();
    else if (l?.kind === 'num' && !l.plus) chars = l.digits;
    else if (l?.kind === 'word') chars = l.code;
    if (!l || chars === null) break;
    chunks.push({ chars, last: l.last });
    length += chars.length;
    if (scan.tokens[l.last]!.endsSentence) break;
  }
  return chunks;
}

/** The code of exactly `length` characters from the chunks (ending at a chunk's end), or null. */
function exactly(chunks: readonly Chunk[], length: number): { code: string; used: number } | null {
  let code = '';
  for (let i = 0; i < chunks.length; i++) {
    code += chunks[i]!.chars;
    if (code.length === length) return { code, used: i + 1 };
    if (code.length > length) return null;
  }
  return null;
}

/** Starts only where a code can: a spelled letter or a written code beginning with two letters. */
function canStart(scan: Scan, k: number): boolean {
  const l = scan.lexemes[k]!;
  return l.kind === 'letter' || (l.kind === 'word' && l.code !== null && /^[A-Z]{2}/.test(l.code));
}

/** IBAN-shaped stretches — a registry country, check digits, that country's length — valid or not. */
function ibanShapes(scan: Scan): Array<{ k: number; chunks: Chunk[]; code: string }> {
  return scan.memo('iban-shapes', () => {
    const shapes: Array<{ k: number; chunks: Chunk[]; code: string }> = [];
    for (let k = 0; k < scan.lexemes.length; k++) {
      if (!canStart(scan, k)) continue;
      const chunks = chunksFrom(scan, k, 34);
      const head = chunks.map((c) => c.chars).join('').slice(0, 4);
      const length = IBAN_LENGTHS[head.slice(0, 2)];
      const iban = length === undefined || !/^[A-Z]{2}[0-9]{2}$/.test(head) ? null : exactly(chunks, length);
      if (!iban) continue;
      shapes.push({ k, chunks: chunks.slice(0, iban.used), code: iban.code });
      k += iban.used - 1;
    }
    return shapes;
  });
}

export function findIbans(scan: Scan): Found[] {
  return ibanShapes(scan)
    .filter((s) => ibanValid(s.code))
    .map((s) => scan.found('iban', scan.lexemes[s.k]!.first, s.chunks[s.chunks.length - 1]!.last, s.code));
}

/**
 * Tokens inside IBAN-shaped stretches, valid or not: their digits are the IBAN's, so a
 * mistyped IBAN is not taken apart into a phone or card number.
 */
export function ibanShapedTokens(scan: Scan): Set<number> {
  return scan.memo('iban-tokens', () => {
    const tokens = new Set<number>();
    for (const s of ibanShapes(scan)) for (let t = scan.lexemes[s.k]!.first; t <= s.chunks[s.chunks.length - 1]!.last; t++) tokens.add(t);
    return tokens;
  });
}

/** AB 12 34 56 C: two letters, six digits, and the suffix A–D when it follows. */
export function findNationalInsuranceNumbers(scan: Scan): Found[] {
  const found: Found[] = [];
  for (let k = 0; k < scan.lexemes.length; k++) {
    if (!canStart(scan, k)) continue;
    const chunks = chunksFrom(scan, k, 9);
    const full = exactly(chunks, 9);
    const bare = exactly(chunks, 8);
    // Without its suffix, eight characters followed by more code are part of something longer.
    const nino = full && ninoValid(full.code) ? full : bare && chunks.length === bare.used && ninoValid(bare.code) ? bare : null;
    if (!nino) continue;
    found.push(scan.found('uk_national_insurance_number', scan.lexemes[k]!.first, chunks[nino.used - 1]!.last, nino.code));
    k += nino.used - 1;
  }
  return found;
}
