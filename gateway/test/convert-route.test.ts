/**
 * POST /api/v1/convert end to end (gateway → billing admission → conversion → billing charge →
 * library), and the billing rules every AI route obeys: refusal before the body is read,
 * spending cap, rate limit with its headers (across two gateway replicas, each over billing and
 * conversion replicas of its own, sharing billing's rate limiter in Redis as in production), and
 * Idempotency-Key.
 */
import * as http from 'node:http';
import { seedLibrary } from '@murmur/app';
import { itIfReal, realRedisUnavailable } from '@murmur/kit/testing';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

const TRANSCRIPT =
  'Priya opened the planning meeting for the checkout redesign. We agreed to ship the new payment page in March. ' +
  'Marcus will send the revised deck to the design team by Friday. Elena needs to review the analytics dashboard before Tuesday. ' +
  'Tom raised a concern about the mobile layout, and we decided to run a usability test next week.';

/** Why billing's rate limiter cannot run on Redis here (REDIS_URL, else a redis-server of the test's own), or undefined. */
const redisMissing = realRedisUnavailable();

describe('POST /api/v1/convert and the AI billing pipeline', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startSystem({ ai: true, rateLimitsOnRedis: !redisMissing });
  });
  afterAll(async () => {
    await sys.stop();
  });

  async function post(base: string, key: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}/api/v1/convert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json = {};
    try {
      json = JSON.parse(text) as Json;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: json };
  }

  const usage = async (key: string) => (await get(sys.baseUrl, '/api/v1/usage', key)).body as Json;

  it('converts an inline transcript and charges by its size', async () => {
    const { key } = await sys.newUser('convert@example.com');
    const res = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'action_items' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'artifact', kind: 'action_items', format: 'markdown', credits_charged: 1, recording_id: null });
    expect(res.body.id).toMatch(/^art_/);
    expect(res.body.content).toContain('Marcus');
    expect(res.headers.get('ratelimit-limit')).toBe('10');
    expect(res.headers.get('ratelimit-remaining')).toBe('9');
    const u = await usage(key);
    expect(u.credits.monthly_remaining).toBe(99);
    expect(u.counters.conversions).toBe(1);
  });

  it('says when capacity returns right after two calls, in the separate headers and the draft’s RateLimit fields alike', async () => {
    const { key } = await sys.newUser('reset@example.com');
    await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' });
    const res = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' });
    expect(res.status).toBe(200);
    const reset = Number(res.headers.get('ratelimit-reset'));
    // The first call's slot frees one 60-second window after it: never 0, never more than the window.
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
    expect(res.headers.get('ratelimit-remaining')).toBe('8');
    expect(res.headers.get('ratelimit-policy')).toBe('"ai";q=10;w=60');
    expect(res.headers.get('ratelimit')).toBe(`"ai";r=8;t=${reset}`);
    expect((await usage(key)).rate_limit).toMatchObject({ remaining: 8, reset_seconds: expect.any(Number) });
    expect((await usage(key)).rate_limit.reset_seconds).toBeGreaterThanOrEqual(1);
  });

  it('gives plain text and a spreadsheet as CSV with outputFormat "plain"', async () => {
    const { key } = await sys.newUser('plain@example.com');
    const res = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'spreadsheet', outputFormat: 'plain' });
    expect(res.status).toBe(200);
    expect(res.body.format).toBe('plain');
    expect(res.body.content.split('\n')[0]).toMatch(/owner/i);
    expect(res.body.content).not.toContain('|');
  });

  it('stores the artifact on a recording named by recording_id, and refuses another user’s recording without charging', async () => {
    const owner = await sys.newUser('rec-owner@example.com');
    const other = await sys.newUser('rec-other@example.com');
    await seedLibrary(sys.admin.library, owner.user.id, { recordings: 2, seed: 3 });
    const recId = (await get(sys.baseUrl, '/api/v1/recordings?limit=1', owner.key)).body.data[0].id as string;
    const res = await post(sys.baseUrl, owner.key, { recording_id: recId, kind: 'summary' });
    expect(res.status).toBe(200);
    expect(res.body.recording_id).toBe(recId);
    const rec = await get(sys.baseUrl, `/api/v1/recordings/${recId}`, owner.key);
    expect(rec.body.artifacts.map((a: Json) => a.id)).toContain(res.body.id);

    const before = await usage(other.key);
    const foreign = await post(sys.baseUrl, other.key, { recording_id: recId, kind: 'summary' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const after = await usage(other.key);
    expect(after.credits.monthly_remaining).toBe(before.credits.monthly_remaining);
  });

  it.each([
    ['not JSON', '{"transcript": ', null],
    ['a JSON array', '[]', null],
    ['neither source', { kind: 'summary' }, 'transcript'],
    ['both sources', { kind: 'summary', transcript: 'x', recording_id: 'rec_x' }, 'recording_id'],
    ['an unknown kind', { kind: 'poem', transcript: TRANSCRIPT }, 'kind'],
    ['a bad outputFormat', { kind: 'summary', transcript: TRANSCRIPT, outputFormat: 'pdf' }, 'outputFormat'],
    ['a wrong type', { kind: 'summary', transcript: 42 }, 'transcript'],
    ['an unknown field', { kind: 'summary', transcript: TRANSCRIPT, colour: 'red' }, 'colour'],
    ['an empty transcript', { kind: 'summary', transcript: '   ' }, 'transcript'],
  ])('answers %s with 400 invalid_request', async (_name, body, param) => {
    const { key } = await sys.newUser(`bad-${Math.random().toString(36).slice(2)}@example.com`);
    const res = await post(sys.baseUrl, key, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', param });
    expect((await usage(key)).credits.monthly_remaining).toBe(100);
  });

  it('refuses a user with no credits before reading the body', async () => {
    const { user, key } = await sys.newUser('broke@example.com');
    await sys.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
    const url = new URL(`${sys.baseUrl}/api/v1/convert`);
    // Headers and a first piece of the body are sent; the rest never is. The answer must come anyway.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': '1000000' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.write('{"transcript": "');
    });
    expect(status).toBe(402);
  });

  it('reads a short body before billing admits the call, which its charge then does: one slot, the window on every answer', async () => {
    const { user, key } = await sys.newUser('short-body@example.com');
    const ok = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-limit')).toBe('10');
    expect(ok.headers.get('ratelimit-remaining')).toBe('9');
    expect((await usage(key)).rate_limit.remaining).toBe(9);
    // Read first: with no credits left, a malformed short body is a 400 (with the window) and a good one a 402; no slot taken.
    await sys.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 0, prepaidCredits: 0, note: 'test' });
    const bad = await post(sys.baseUrl, key, { kind: 'summary' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('ratelimit-remaining')).toBe('9');
    const broke = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' });
    expect(broke.status).toBe(402);
    expect(broke.body.error).toMatchObject({ code: 'insufficient_tokens' });
    expect((await usage(key)).rate_limit.remaining).toBe(9);
  });

  it('refuses at the spending cap and passes once the cap is raised', async () => {
    const { user, key } = await sys.newUser('capped@example.com');
    await sys.admin.billing.adjustCredits({ userId: user.id, monthlyCredits: 0, prepaidCredits: 100, note: 'test' });
    await sys.admin.billing.setSpendingCap({ userId: user.id, capCents: 0 });
    const refused = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 'spending_cap_reached', type: 'billing_error' });
    await sys.admin.billing.setSpendingCap({ userId: user.id, capCents: 500 });
    const ok = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' });
    expect(ok.status).toBe(200);
    const u = await usage(key);
    expect(u.credits.prepaid_remaining).toBe(99);
    expect(u.spending.spent_cents).toBe(1);
  });

  itIfReal(redisMissing, 'admits exactly 10 of 25 concurrent AI calls across two gateway replicas, each over billing and conversion replicas of its own (one rate limit, in Redis), with headers on the 429s', async () => {
    const { key } = await sys.newUser('burst@example.com');
    // The second gateway's calls are admitted and charged by other billing and conversion
    // instances than the first's: per-instance limiters would admit 10 on each side.
    const second = await sys.extraGateway({ billingReplica: true });
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => post(i % 2 ? second.baseUrl : sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'key_points' })),
    );
    const statuses = results.map((r) => `${r.status}:${r.body?.error?.code ?? ''}`);
    expect(statuses.filter((x) => !x.startsWith('200') && !x.startsWith('429'))).toEqual([]);
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(15);
    for (const r of limited) {
      expect(r.body.error.code).toBe('rate_limit_exceeded');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('ratelimit-limit')).toBe('10');
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
    expect((await usage(key)).counters.conversions).toBe(10);
  });

  describe('Idempotency-Key', () => {
    it('replays the first response for the same key and parameters, charging once', async () => {
      const { key } = await sys.newUser('idem@example.com');
      const body = { transcript: TRANSCRIPT, kind: 'email' };
      const first = await post(sys.baseUrl, key, body, { 'idempotency-key': 'order-42' });
      const replay = await post(sys.baseUrl, key, body, { 'idempotency-key': 'order-42' });
      expect(first.status).toBe(200);
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(replay.body).toEqual(first.body);
      const u = await usage(key);
      expect(u.counters.conversions).toBe(1);
      expect(u.credits.monthly_remaining).toBe(99);
      expect(u.rate_limit.remaining).toBe(9);
    });

    it('answers 409 for the same key with other parameters', async () => {
      const { key } = await sys.newUser('idem-conflict@example.com');
      expect((await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'email' }, { 'idempotency-key': 'k1' })).status).toBe(200);
      const other = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' }, { 'idempotency-key': 'k1' });
      expect(other.status).toBe(409);
      expect(other.body.error).toMatchObject({ code: 'idempotency_conflict', type: 'idempotency_error' });
    });

    it('answers 409 to a duplicate while the first request still runs', async () => {
      const { key } = await sys.newUser('idem-running@example.com');
      const url = new URL(`${sys.baseUrl}/api/v1/convert`);
      // The first request stays open (its body is never finished), so it is still running.
      const held = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': '100000', 'idempotency-key': 'slow' },
      });
      held.on('error', () => undefined);
      held.write('{"kind": "summary", "transcript": "');
      // The held request has claimed its key (the claim precedes reading the body).
      await sys.claims.claimed('slow');
      const dup = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' }, { 'idempotency-key': 'slow' });
      held.destroy();
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe('idempotency_conflict');
    });

    it('keeps keys per user and lets a refused request be retried with its key', async () => {
      const a = await sys.newUser('idem-a@example.com');
      const b = await sys.newUser('idem-b@example.com');
      expect((await post(sys.baseUrl, a.key, { transcript: TRANSCRIPT, kind: 'summary' }, { 'idempotency-key': 'same' })).status).toBe(200);
      const otherUser = await post(sys.baseUrl, b.key, { transcript: TRANSCRIPT, kind: 'email' }, { 'idempotency-key': 'same' });
      expect(otherUser.status).toBe(200);
      expect(otherUser.headers.get('idempotent-replayed')).toBeNull();
      const bad = await post(sys.baseUrl, b.key, { kind: 'poem', transcript: TRANSCRIPT }, { 'idempotency-key': 'retry-me' });
      expect(bad.status).toBe(400);
      const fixed = await post(sys.baseUrl, b.key, { kind: 'summary', transcript: TRANSCRIPT }, { 'idempotency-key': 'retry-me' });
      expect(fixed.status).toBe(200);
    });

    it('refuses a malformed key', async () => {
      const { key } = await sys.newUser('idem-bad@example.com');
      const res = await post(sys.baseUrl, key, { transcript: TRANSCRIPT, kind: 'summary' }, { 'idempotency-key': 'x'.repeat(256) });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe('Idempotency-Key');
    });
  });
});
