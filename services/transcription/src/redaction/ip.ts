/**
 * IP addresses: written IPv4 (192.168.1.10, also inside 10.0.0.1:8080 or 10.0.0.0/8; each
 * octet 0–255) and IPv6 (2001:db8::1, as node:net parses it, with at least one hex digit), and
 * spoken IPv4 ("one nine two dot one sixty eight dot one dot ten"). Spoken octets are joined by
 * "dot" only: "two point oh point one point three" is a version number.
 */
import { isIPv6 } from 'node:net';
import { ipv4Valid } from './checks';
import type { NumLexeme } from './lexemes';
import type { Found, Scan } from './scan';

const IPV4 = /(?<![0-9.])[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![0-9]|\.[0-9])/g;
const IPV6_CANDIDATE = /(?<![0-9A-Za-z:])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*(?![0-9A-Za-z:])/g;

function findWritten(scan: Scan): Found[] {
  const found: Found[] = [];
  for (const t of scan.tokens) {
    if (!/[0-9a-f]/i.test(t.core)) continue;
    if (t.core.includes('.')) {
      for (const m of t.core.matchAll(IPV4)) {
        if (ipv4Valid(m[0].split('.'))) found.push({ policy: 'ip_address', start: t.start + m.index, end: t.start + m.index + m[0].length, value: m[0] });
      }
    }
    if (t.core.includes(':')) {
      for (const m of t.core.matchAll(IPV6_CANDIDATE)) {
        if (/[0-9a-f]/i.test(m[0]) && isIPv6(m[0])) {
          found.push({ policy: 'ip_address', start: t.start + m.index, end: t.start + m.index + m[0].length, value: m[0].toLowerCase() });
        }
      }
    }
  }
  return found;
}

/** A spoken octet: the numbers from lexeme `k` run together ("one ninety two" → 192). */
function octetAt(scan: Scan, k: number): { end: number; octet: string } | null {
  let octet = '';
  let at = k;
  for (let l = scan.lexemes[at]; l?.kind === 'num'; l = scan.lexemes[++at]) {
    octet += (l as NumLexeme).digits;
    if (scan.tokens[l.last]!.endsSentence) { at += 1; break; }
  }
  if (octet === '' || octet.length > 3 || (octet.length > 1 && octet.startsWith('0'))) return null;
  return { end: at, octet };
}

function findSpoken(scan: Scan): Found[] {
  const found: Found[] = [];
  const lex = scan.lexemes;
  for (let k = 0; k < lex.length; k++) {
    if (lex[k]!.kind !== 'num') continue;
    const octets: string[] = [];
    let at = k;
    while (octets.length < 4) {
      const o = octetAt(scan, at);
      if (!o) break;
      octets.push(o.octet);
      at = o.end;
      if (octets.length === 4) break;
      const dot = lex[at];
      if (dot?.kind !== 'sym' || dot.char !== '.' || scan.tokens[dot.first]!.norm !== 'dot') break;
      at += 1;
    }
    const next = lex[at];
    if (octets.length === 4 && ipv4Valid(octets) && !(next?.kind === 'sym' && next.char === '.')) {
      found.push(scan.found('ip_address', lex[k]!.first, lex[at - 1]!.last, octets.join('.')));
      k = at - 1;
    }
  }
  return found;
}

export function findIpAddresses(scan: Scan): Found[] {
  return [...findWritten(scan), ...findSpoken(scan)];
}
