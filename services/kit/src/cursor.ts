/**
 * Opaque, tamper-evident page cursors: base64url(JSON) + HMAC. A cursor that does not verify
 * is a client error (invalid_request, param "cursor"), never a 500.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MurmurError } from './errors';

export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(payload: Record<string, unknown>): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** Decodes and verifies; throws invalid_request for anything forged or malformed. */
  decode<T extends Record<string, unknown>>(cursor: string, check: (value: unknown) => value is T): T {
    const bad = new MurmurError('invalid_request', 'The cursor is not valid. Pass `next_cursor` from a previous page unchanged.', { param: 'cursor' });
    const [body, sig, extra] = cursor.split('.');
    if (!body || !sig || extra !== undefined || cursor.length > 512) throw bad;
    const expected = Buffer.from(this.sign(body));
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

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url').slice(0, 22);
  }
}
