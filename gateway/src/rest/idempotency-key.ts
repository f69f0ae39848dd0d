/** The Idempotency-Key header: optional, 1–255 printable ASCII characters, scoped to the key's owner. */
import type { Request } from 'express';
import { invalidParam, MAX_IDEMPOTENCY_KEY_CHARS } from '@murmur/kit';

const KEY = new RegExp(`^[\\x21-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_CHARS}}$`);

export function idempotencyKeyOf(req: Request): string | null {
  const value = req.get('idempotency-key');
  if (value === undefined) return null;
  if (!KEY.test(value)) {
    throw invalidParam('Idempotency-Key', `Idempotency-Key must be 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces, e.g. a UUID.`);
  }
  return value;
}
