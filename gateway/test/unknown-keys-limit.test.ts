/**
 * Issue #30: well-formed but unknown keys each cost auth a database read, so the gateway bounds
 * them per client address (http/failed-keys.ts): past the window's failures an address gets 429
 * `too_many_invalid_keys` with `Retry-After` and the contract body, without auth being asked;
 * a key verified lately still works from that address, other addresses are not affected, and
 * malformed keys (which cost nothing) are not counted. Clients are told apart by X-Forwarded-For
 * from loopback, the default trusted proxy (MURMUR_TRUSTED_PROXIES).
 */
import { rpcCallsAnswered } from '@murmur/kit/testing';
import { addressBucket, FAILED_KEYS_PER_WINDOW } from '../src/http/failed-keys';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

describe('the bound on unknown keys per client address', () => {
  let sys: TestSystem;
  let key: string;

  beforeAll(async () => {
    sys = await startSystem();
    key = (await sys.newUser('unknown-keys@example.com')).key;
  });
  afterAll(async () => {
    await sys.stop();
  });

  /** Key verifications auth has answered (not its other RPCs: the request log's batches go there too). */
  const authCalls = () => rpcCallsAnswered('/murmur.auth.v1.AuthService/VerifyKey');
  const unknownKey = (i: number) => `svc_${i.toString(16).padStart(64, 'e')}`;
  const from = (address: string, k: string, path = '/api/v1/me') => get(sys.baseUrl, path, k, { 'x-forwarded-for': address });

  it('answers 429 too_many_invalid_keys past the failures of a window, without asking auth, and never slows a key verified lately', async () => {
    // Verified once from another address: remembered as valid by this gateway.
    expect((await from('198.51.100.20', key)).status).toBe(200);
    for (let i = 0; i < FAILED_KEYS_PER_WINDOW; i++) {
      const res = await from('203.0.113.10', unknownKey(i));
      expect([i, res.status, res.body.error.code]).toEqual([i, 401, 'invalid_api_key']);
    }
    const before = await authCalls();
    const refused = await from('203.0.113.10', unknownKey(1000));
    expect([refused.status, refused.body.error.type, refused.body.error.code]).toEqual([429, 'rate_limit_error', 'too_many_invalid_keys']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect([refused.headers.get('ratelimit-policy'), refused.headers.get('ratelimit-remaining')]).toEqual([`"keys";q=${FAILED_KEYS_PER_WINDOW};w=60`, '0']);
    expect(refused.body.error.message).toMatch(/unknown or revoked API keys.*Wait \d+ s/);
    const mcp = await fetch(`${sys.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${unknownKey(1001)}`, 'x-forwarded-for': '203.0.113.10', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect([mcp.status, ((await mcp.json()) as Json).error.code]).toEqual([429, 'too_many_invalid_keys']);
    expect(await authCalls()).toBe(before);

    // The working key from the blocked address, and another address's keys, go through.
    expect((await from('203.0.113.10', key)).status).toBe(200);
    expect((await from('203.0.113.11', unknownKey(2000))).status).toBe(401);
    expect((await from('203.0.113.11', key)).status).toBe(200);
  });

  it('does not count malformed keys, which cost auth nothing', async () => {
    for (let i = 0; i < FAILED_KEYS_PER_WINDOW + 5; i++) {
      const res = await from('203.0.113.12', `svc_${'z'.repeat(64)}`);
      expect([i, res.status, res.body.error.code]).toEqual([i, 401, 'invalid_api_key']);
    }
    expect((await from('203.0.113.12', unknownKey(3000))).status).toBe(401);
  });
});

describe('client address buckets', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1234:5678::1', '20010db8123456::/56'],
    ['2001:db8:1234:56ff:abcd::9', '20010db8123456::/56'],
    ['2001:db8::1', '20010db8000000::/56'],
    ['::1', '00000000000000::/56'],
    [undefined, 'unknown'],
  ])('puts %s in %s', (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });
});
