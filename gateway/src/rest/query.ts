/**
 * Query-string parsing for REST: each route declares its parameters; unknown, repeated,
 * mistyped or badly encoded ones are a 400 invalid_request naming the parameter. The raw query
 * is decoded here, strictly — Node's lenient decoder turns invalid UTF-8 (`%C3%28`, `%ED%A0%80`)
 * into U+FFFD and keeps a broken escape (`%ZZ`) as text, so a client would search for something
 * other than what it sent. Range rules stay with the service that owns the data, so REST and
 * MCP enforce them identically; text and date rules are the operations' (shared with MCP).
 */
import type { Request } from 'express';
import { invalidParam, MAX_CURSOR_CHARS, MAX_QUERY_VALUE_CHARS } from '@murmur/contract';
import { parseDateTime, textProblem } from '../operations';
import type { QuerySpec } from '../routes';

/** A query as parsed by its route's rules (routes.ts). */
export type ParsedQuery<S extends QuerySpec> = {
  [K in keyof S]?: S[K] extends 'int' ? number : S[K] extends 'datetime' ? Date : S[K] extends 'boolean' ? boolean : string;
};

const INT = /^-?\d{1,9}$/;

/** Percent-decoding as a URL query means it (`+` is a space), refusing what is not UTF-8. */
function decode(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** The query's name/value pairs, decoded; a part that does not decode names itself as it was sent. */
function pairsOf(req: Request): Array<[string, string]> {
  const url = req.originalUrl ?? req.url;
  const at = url.indexOf('?');
  if (at === -1) return [];
  const pairs: Array<[string, string]> = [];
  for (const part of url.slice(at + 1).split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const name = decode(rawName);
    const shownName = (name ?? rawName).slice(0, 100);
    if (name === null) throw invalidParam(shownName, 'A query parameter name is not valid percent-encoded UTF-8.');
    const value = decode(eq === -1 ? '' : part.slice(eq + 1));
    if (value === null) {
      throw invalidParam(shownName, `\`${shownName}\` is not valid percent-encoded UTF-8. Encode the value as UTF-8, then percent-encode it (encodeURIComponent).`);
    }
    pairs.push([name, value]);
  }
  return pairs;
}

export function parseQuery<S extends QuerySpec>(req: Request, spec: S): ParsedQuery<S> {
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [name, raw] of pairsOf(req)) {
    const kind = Object.prototype.hasOwnProperty.call(spec, name) ? spec[name] : undefined;
    if (!kind) throw invalidParam(name.slice(0, 100), `Unknown query parameter \`${name.slice(0, 100)}\`. Allowed: ${Object.keys(spec).join(', ') || 'none'}.`);
    if (seen.has(name)) throw invalidParam(name, `\`${name}\` must be given once, as a plain value.`);
    seen.add(name);
    if (kind === 'int') {
      if (!INT.test(raw)) throw invalidParam(name, `\`${name}\` must be an integer.`);
      out[name] = Number(raw);
    } else if (kind === 'boolean') {
      if (raw !== 'true' && raw !== 'false') throw invalidParam(name, `\`${name}\` must be true or false.`);
      out[name] = raw === 'true';
    } else if (kind === 'datetime') {
      out[name] = parseDateTime(name, raw);
    } else {
      // In UTF-16 units, before the services' own (lower) limits.
      const max = kind === 'cursor' ? MAX_CURSOR_CHARS : MAX_QUERY_VALUE_CHARS;
      if (raw.length > max) throw invalidParam(name, `\`${name}\` is too long (${max} characters at most).`);
      const problem = textProblem(raw);
      if (problem) throw invalidParam(name, `\`${name}\` ${problem}.`);
      out[name] = raw;
    }
  }
  return out as ParsedQuery<S>;
}
