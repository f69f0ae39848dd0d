/**
 * The shape of Murmur's ids: a lowercase prefix naming the kind (`rec_`, `usr_`), `_`, and
 * random bits in base32hex-ish lowercase. Minting them (the CSPRNG pool) is the kit's
 * (services/kit/src/ids.ts); what an id looks like, and the one refusal of a malformed one, are
 * here.
 */
import { invalidParam } from './errors';

/** The 32 characters an id's random part is written in, 5 bits each. */
export const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuv';

/** True when `id` has the given prefix and the shape the kit's `newId` produces. */
export function isId(prefix: string, id: string): boolean {
  return id.length <= 64 && id.startsWith(`${prefix}_`) && /^[a-z]+_[0-9a-v]{8,40}$/.test(id);
}

/**
 * Checks an id's prefix and shape before any lookup, so junk is a bad parameter (invalid_request
 * naming `param`), not a 404 or a missing account.
 */
export function requireId(prefix: string, value: string, param: string): string {
  if (!isId(prefix, value)) throw invalidParam(param, `${param} must be an id of the form ${prefix}_….`);
  return value;
}
