/**
 * Minting opaque, prefixed, random ids (`rec_…`, `usr_…`): CSPRNG output in the contract's
 * alphabet (their shape and `isId` are the contract's, services/contract/src/ids.ts).
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { ID_ALPHABET as ALPHABET } from '@murmur/contract';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * `n` bytes of CSPRNG output from a pool refilled 4 KiB at a time: one call into OpenSSL per
 * few hundred ids instead of one per id (a lone `randomBytes(12)` per request was 2 % of the
 * gateway's CPU on the hottest read). Every byte is handed out once; a refill is a new buffer,
 * so no view given out is ever overwritten.
 */
export function poolRandomBytes(n: number): Buffer {
  if (n > 256) return randomBytes(n);
  if (used + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    used = 0;
  }
  const out = pool.subarray(used, used + n);
  used += n;
  return out;
}

export function newId(prefix: string, bytes = 15): string {
  const buf = poolRandomBytes(bytes);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${out}`;
}
