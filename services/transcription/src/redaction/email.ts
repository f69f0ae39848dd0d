/**
 * E-mail addresses, written ("john.smith@example.co.uk", a practical subset of RFC 5322: a
 * dot-atom local part of at most 64 characters, a host name of letters, digits and hyphens with
 * an alphabetic top-level domain, 254 characters in all; no quoted local parts, no address
 * literals) and spoken ("john dot smith at example dot co dot uk", "j o h n at i b m dot com").
 * Spoken, the top-level domain must be a common one and the local part no ordinary word, so
 * "look at this dot com" stays.
 */
import type { Lexeme } from './lexemes';
import type { Found, Scan } from './scan';

const WRITTEN = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![A-Za-z0-9-])/g;

/** Top-level domains accepted when spoken. */
const SPOKEN_TLDS = new Set([
  'com', 'org', 'net', 'edu', 'gov', 'mil', 'int', 'info', 'biz', 'io', 'ai', 'app', 'dev', 'me', 'tv', 'co', 'xyz', 'online', 'site', 'tech', 'email',
  'uk', 'us', 'ca', 'au', 'nz', 'ie', 'de', 'fr', 'es', 'it', 'nl', 'be', 'ch', 'at', 'se', 'no', 'dk', 'fi', 'pl', 'pt', 'in', 'jp', 'cn', 'br', 'mx', 'ru', 'za',
]);
/** Words that stand before "at" in ordinary speech: never a spoken local part on their own. */
const NOT_LOCAL = new Set(
  ('i me you him her us them it this that these those there here what where who which one ones look looked looks looking stay stayed '
    + 'arrive arrived work worked works live lived lives meet met be been is are was were am good bad better best great well home back '
    + 'out up down off all something anything nothing everything someone anyone everyone people thing things time times least most '
    + 'first last not and or but so just only even still also then now today tonight morning night noon once again aim aimed point '
    + 'pointed laugh laughed shop shopped buy bought sell sold order ordered sign signed log logged').split(' '),
);
/** Words that never begin a spoken host name ("at the …", "at my …"). */
const NOT_HOST = new Set('the a an this that these those my your his her its our their some any'.split(' '));
const LABEL = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function findWritten(scan: Scan): Found[] {
  const found: Found[] = [];
  for (const t of scan.tokens) {
    if (!t.core.includes('@')) continue;
    for (const m of t.core.matchAll(WRITTEN)) {
      const local = m[0].slice(0, m[0].lastIndexOf('@'));
      if (local.length > 64 || m[0].length > 254) continue;
      const start = t.start + m.index;
      found.push({ policy: 'email_address', start, end: start + m[0].length, value: m[0].toLowerCase() });
    }
  }
  return found;
}

/** A spelled or numbered character ("j", "oh" beside a letter is the letter o), or null. */
function charOf(lex: readonly Lexeme[], k: number, scan: Scan): string | null {
  const l = lex[k];
  if (!l) return null;
  if (l.kind === 'letter') return l.char;
  if (l.kind !== 'num') return null;
  const norm = scan.tokens[l.first]!.norm;
  if ((norm === 'o' || norm === 'oh') && (lex[k - 1]?.kind === 'letter' || lex[k + 1]?.kind === 'letter')) return 'o';
  return l.digits;
}

/** The host name from lexeme `k`: labels joined by "dot"; its end (exclusive) and text, or null. */
function hostAt(scan: Scan, k: number): { end: number; host: string } | null {
  const lex = scan.lexemes;
  const labels: string[] = [];
  let at = k;
  for (;;) {
    let label = '';
    const l = lex[at];
    if (l?.kind === 'word' && /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/.test(scan.tokens[l.first]!.norm)) {
      label = scan.tokens[l.first]!.norm;
      at += 1;
    } else {
      for (let c = lex[at]; c?.kind === 'letter'; c = lex[++at]) label += c.char;
    }
    if (label === '' || !label.split('.').every((p) => LABEL.test(p))) return null;
    labels.push(...label.split('.'));
    const dot = lex[at];
    const next = lex[at + 1];
    if (dot?.kind === 'sym' && dot.char === '.' && next !== undefined && next.kind !== 'sym') at += 1;
    else break;
  }
  if (labels.length < 2 || NOT_HOST.has(labels[0]!) || !SPOKEN_TLDS.has(labels[labels.length - 1]!)) return null;
  return { end: at, host: labels.join('.') };
}

/** The local part ending at lexeme `k` (inclusive), read backwards: its first lexeme and text, or null. */
function localBefore(scan: Scan, k: number): { start: number; local: string } | null {
  const lex = scan.lexemes;
  const parts: string[] = [];
  let at = k;
  let words = 0;
  for (;;) {
    let piece = '';
    let start = at + 1;
    // Spelled characters, then at most one word before them ("john one two", "j o h n").
    for (let c = charOf(lex, start - 1, scan); c !== null && start - 1 >= 0; c = charOf(lex, start - 1, scan)) { piece = c + piece; start -= 1; }
    // A word, or a word before spelled digits ("john one two"); never before spelled letters.
    const w = lex[start - 1];
    const wordNorm = w?.kind === 'word' ? scan.tokens[w.first]!.norm : '';
    if (/^[a-z0-9][a-z0-9._+-]*$/.test(wordNorm) && (piece === '' || (/^[0-9]+$/.test(piece) && !NOT_LOCAL.has(wordNorm)))) {
      piece = wordNorm + piece;
      start -= 1;
      words += 1;
    }
    if (piece === '') return null;
    parts.unshift(piece);
    const sep = lex[start - 1];
    const before = lex[start - 2];
    if (sep?.kind === 'sym' && sep.char !== '@' && sep.char !== '+' && before !== undefined && before.kind !== 'sym') {
      parts.unshift(sep.char);
      at = start - 2;
      continue;
    }
    const local = parts.join('');
    if (parts.length === 1 && words === 1 && (NOT_LOCAL.has(local) || (local.length >= 6 && local.endsWith('ing')))) return null;
    return { start, local };
  }
}

function findSpoken(scan: Scan): Found[] {
  const found: Found[] = [];
  const lex = scan.lexemes;
  for (let k = 1; k < lex.length - 1; k++) {
    const l = lex[k]!;
    if (l.kind !== 'sym' || l.char !== '@') continue;
    const host = hostAt(scan, k + 1);
    if (!host) continue;
    const local = localBefore(scan, k - 1);
    if (!local || local.local.length > 64) continue;
    found.push(scan.found('email_address', lex[local.start]!.first, lex[host.end - 1]!.last, `${local.local}@${host.host}`));
    k = host.end - 1;
  }
  return found;
}

export function findEmailAddresses(scan: Scan): Found[] {
  return [...findWritten(scan), ...findSpoken(scan)];
}
