import { createHash } from 'node:crypto';
import { auth } from '@murmur/proto';
import { API_KEY_PATTERN, generateApiKey, hashKey, keyHint } from '@murmur/auth';
import { expiresAtFor, isExpired, sameHash } from '../src/api-key';

const now = new Date('2026-01-15T12:00:00.000Z');
const DAY = 86_400_000;

describe('API key material', () => {
  it('mints distinct keys of the documented shape', () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(API_KEY_PATTERN);
  });

  it('hashes with SHA-256 hex of the full key', () => {
    const key = `svc_${'0123456789abcdef'.repeat(4)}`;
    expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('shows the first and last four hex characters in the hint', () => {
    expect(keyHint(`svc_1a2b${'0'.repeat(56)}9f0e`)).toBe('svc_1a2b…9f0e');
  });

  it.each([
    ['same hashes', 'ab'.repeat(32), 'ab'.repeat(32), true],
    ['different hashes', 'ab'.repeat(32), 'ba'.repeat(32), false],
    ['different lengths', 'ab'.repeat(32), 'ab', false],
  ])('compares %s in constant time', (_name, a, b, expected) => {
    expect(sameHash(a, b)).toBe(expected);
  });

  it.each<[string, auth.KeyExpiry, Date | null]>([
    ['UNSPECIFIED defaults to 90 days', auth.KeyExpiry.KEY_EXPIRY_UNSPECIFIED, new Date(now.getTime() + 90 * DAY)],
    ['30 days', auth.KeyExpiry.KEY_EXPIRY_30_DAYS, new Date(now.getTime() + 30 * DAY)],
    ['90 days', auth.KeyExpiry.KEY_EXPIRY_90_DAYS, new Date(now.getTime() + 90 * DAY)],
    ['365 days', auth.KeyExpiry.KEY_EXPIRY_365_DAYS, new Date(now.getTime() + 365 * DAY)],
    ['never', auth.KeyExpiry.KEY_EXPIRY_NEVER, null],
  ])('computes the expiry for %s', (_name, expiry, expected) => {
    expect(expiresAtFor(expiry, now)).toEqual(expected);
  });

  it.each([5, -1, 99])('rejects the unknown expiry value %i as a bad parameter', (value) => {
    expect(() => expiresAtFor(value as auth.KeyExpiry, now)).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'expiry' }));
  });

  it.each<[string, Date | null, number, boolean]>([
    ['valid one millisecond before expiry', now, now.getTime() - 1, false],
    ['expired exactly at expiry', now, now.getTime(), true],
    ['expired after expiry', now, now.getTime() + 1000, true],
    ['never expired without an expiry', null, now.getTime() + 100 * 365 * DAY, false],
  ])('is %s', (_name, expiresAt, at, expected) => {
    expect(isExpired(expiresAt, new Date(at))).toBe(expected);
  });
});
