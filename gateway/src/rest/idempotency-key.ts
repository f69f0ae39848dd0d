/** The Idempotency-Key header: optional, 1–255 printable ASCII characters, scoped to the key's owner. */
import type { Request } from 'express';
import { invalidParam } from '@murmur/kit';

const KEY = /^[\x21-\x7e]{1,255}$/;

export function idempotencyKeyOf(req: Request): string | null {
  const value = req.get('idempotency-key');
  if (value === undefined) return null;
  if (!KEY.test(value)) {
    throw invalidParam('Idempotency-Key', 'Idempotency-Key must be 1–255 printable ASCII characters without spaces, e.g. a UUID.');
  }
  return value;
}
