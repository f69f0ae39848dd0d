/** The Idempotency-Key header: optional, 1–255 printable ASCII characters, scoped to the key's owner. */
import type { Request } from 'express';
import { checkIdempotencyKey } from '@murmur/contract';

export function idempotencyKeyOf(req: Request): string | null {
  const value = req.get('idempotency-key');
  return value === undefined ? null : checkIdempotencyKey(value, 'Idempotency-Key');
}
