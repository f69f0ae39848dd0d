/**
 * Query-string parsing for REST: each route declares its parameters; unknown, repeated or
 * mistyped ones are a 400 invalid_request naming the parameter. Range rules stay with the
 * service that owns the data, so REST and MCP enforce them identically.
 */
import type { Request } from 'express';
import { invalidParam } from '@murmur/kit';

export type ParamKind = 'int' | 'string' | 'datetime';
export type QuerySpec = Record<string, ParamKind>;

type Parsed<S extends QuerySpec> = {
  [K in keyof S]?: S[K] extends 'int' ? number : S[K] extends 'datetime' ? Date : string;
};

const INT = /^-?\d{1,9}$/;
// RFC 3339 / ISO-8601 date-time with an explicit zone, or a bare date (midnight UTC).
const DATETIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

export function parseQuery<S extends QuerySpec>(req: Request, spec: S): Parsed<S> {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(req.query)) {
    const kind = spec[name];
    if (!kind) throw invalidParam(name, `Unknown query parameter \`${name}\`. Allowed: ${Object.keys(spec).join(', ') || 'none'}.`);
    if (typeof raw !== 'string') throw invalidParam(name, `\`${name}\` must be given once, as a plain value.`);
    if (kind === 'int') {
      if (!INT.test(raw)) throw invalidParam(name, `\`${name}\` must be an integer.`);
      out[name] = Number(raw);
    } else if (kind === 'datetime') {
      const d = new Date(raw);
      if (!DATETIME.test(raw) || Number.isNaN(d.getTime())) {
        throw invalidParam(name, `\`${name}\` must be an ISO-8601 date-time such as 2026-01-31T00:00:00Z.`);
      }
      out[name] = d;
    } else {
      if (raw.length > 1000) throw invalidParam(name, `\`${name}\` is too long (1000 characters at most).`);
      out[name] = raw;
    }
  }
  return out as Parsed<S>;
}
