/** The Idempotency-Key header: optional, 1–255 printable ASCII characters, scoped to the key's owner. */
import type { Request } from 'express';
import { invalidParam, isIdempotencyKey, MAX_IDEMPOTENCY_KEY_CHARS } from '@murmur/contract';

export function idempotencyKeyOf(req: Request): string | null {
  const value = req.get('idempotency-key');
  if (value === undefined) return null;
  if (!isIdempotencyKey(value)) {
    throw invalidParam('Idempotency-Key', `Idempotency-Key must be 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces, e.g. a UUID.`);
  }
  return value;
}
