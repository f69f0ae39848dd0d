/** Opaque, prefixed, random ids (`rec_…`, `usr_…`): 20 bytes of CSPRNG output in base32hex-ish lowercase. */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuv';

export function newId(prefix: string, bytes = 15): string {
  const buf = randomBytes(bytes);
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

/** True when `id` has the given prefix and the shape {@link newId} produces. */
export function isId(prefix: string, id: string): boolean {
  return id.length <= 64 && id.startsWith(`${prefix}_`) && /^[a-z]+_[0-9a-v]{8,40}$/.test(id);
}
