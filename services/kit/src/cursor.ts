/**
 * Opaque, tamper-evident page cursors: base64url(JSON) + HMAC. A cursor that does not verify
 * is a client error (invalid_request, param "cursor"), never a 500.
 *
 * A cursor can be bound to a context it does not carry — its owner's id: the binding is signed
 * with the payload but never written into the cursor, so a cursor handed to (or guessed by)
 * another user fails verification like a forged one, and reveals nothing about whose it was.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { MAX_CURSOR_CHARS, MurmurError } from '@murmur/contract';

export class CursorCodec {
  /** The secret as a key object, made once: an HMAC from a string key imports the key on every call. */
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** `binding` (e.g. the owner's id) must be given again, identical, to decode. */
  encode(payload: Record<string, unknown>, binding = ''): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body, binding)}`;
  }

  /** Decodes and verifies; throws invalid_request for anything forged, malformed or bound to another `binding`. */
  decode<T extends Record<string, unknown>>(cursor: string, check: (value: unknown) => value is T, binding = ''): T {
    const bad = new MurmurError(
      'invalid_request',
      'The cursor is not valid. Pass `next_cursor` from a previous page of your own, unchanged, or start again without a cursor.',
      { param: 'cursor' },
    );
    const [body, sig, extra] = cursor.split('.');
    if (!body || !sig || extra !== undefined || cursor.length > MAX_CURSOR_CHARS) throw bad;
    const expected = Buffer.from(this.sign(body, binding));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw bad;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw bad;
    }
    if (!check(value)) throw bad;
    return value;
  }

  private sign(body: string, binding: string): string {
    // Length-prefixed, so no (binding, body) pair signs like another; an unbound cursor signs its
    // body alone (base64url has no ':', so it never signs like a bound one).
    const signed = binding === '' ? body : `${binding.length}:${binding}:${body}`;
    return createHmac('sha256', this.key).update(signed).digest('base64url').slice(0, 22);
  }
}
