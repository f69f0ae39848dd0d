/**
 * Redis down and back (docs/operations.md, "Redis down"), on a Redis of the test's own: the
 * rate limiter and the idempotency store fail fast with 503 and charge nothing, key checks and
 * reads degrade to auth and Postgres (never a key a revocation could not reach), and everything
 * recovers by itself once Redis is back, with no process restarted.
 */
import { auth } from '@murmur/proto';
import { describeIfReal, failure } from '@murmur/kit/testing';
import { RESET_SETTLE_MS } from '@murmur/gateway';
import { answeredWell, bugReports, call, eventually, faultTestsUnavailable, startFaultSystem, type FaultSystem } from './support/faults';

const why = faultTestsUnavailable();

const TRANSCRIPT = 'Marcus will send the budget to Dana by Friday. We agreed to move the launch to March.';

describeIfReal(why, 'Redis down, then back', () => {
  let f: FaultSystem;

  beforeAll(async () => {
    f = await startFaultSystem({ ai: true });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('answers fast 503s or degraded successes while Redis is down, charges nothing, and recovers by itself', async () => {
    const { sys } = f;
    const user = await sys.newUser('redis-down@example.com');
    const revoked = await sys.newUser('redis-revoked@example.com');
    const convert = (headers: Record<string, string> = {}) => call(sys.baseUrl, user.key, 'POST', '/convert', { transcript: TRANSCRIPT, kind: 'summary' }, headers);

    // Up: one paid call, and the second key sits in the gateway's verified-key cache.
    expect((await convert()).status).toBe(200);
    expect((await call(sys.baseUrl, revoked.key, 'GET', '/recordings')).status).toBe(200);

    await f.redis.kill();

    const during = [
      await convert(),
      await convert({ 'idempotency-key': 'redis-down-1' }),
      await call(sys.baseUrl, user.key, 'GET', '/usage'),
      await call(sys.baseUrl, user.key, 'GET', '/me'),
      await call(sys.baseUrl, user.key, 'GET', '/recordings'),
      await call(sys.baseUrl, user.key, 'GET', '/folders'),
    ];
    for (const a of during) expect({ path: a.path, ok: answeredWell(a), status: a.status }).toEqual({ path: a.path, ok: true, status: a.status });
    // Billing-exact paths fail fast and say so; reads degrade to auth and Postgres.
    expect(during.map((a) => [a.path, a.status])).toEqual([
      ['/convert', 503],
      ['/convert', 503],
      ['/usage', 503],
      ['/me', 503],
      ['/recordings', 200],
      ['/folders', 200],
    ]);
    expect(during[0]!.body.error.message).toContain('nothing was charged');

    // A key revoked while the revocation channel is down is refused at once: no cache serves it.
    const revocation = await sys.admin.auth.revokeApiKey({ keyId: revoked.keyId, userId: revoked.user.id }).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (revocation !== undefined) expect((await failure(Promise.reject(revocation))).code).toBe('service_unavailable');
    const afterRevoke = await call(sys.baseUrl, revoked.key, 'GET', '/recordings');
    expect([afterRevoke.status, afterRevoke.code]).toEqual([401, 'invalid_api_key']);

    await f.redis.start();

    // Back: the same processes serve every path again, AI calls included.
    await eventually('a paid call succeeds again', async () => (await convert()).status === 200);
    await eventually('usage answers again', async () => (await call(sys.baseUrl, user.key, 'GET', '/usage')).status === 200);
    const keyed = await convert({ 'idempotency-key': 'redis-back-1' });
    expect(keyed.status).toBe(200);
    const replay = await convert({ 'idempotency-key': 'redis-back-1' });
    expect([replay.status, replay.body.id]).toEqual([200, keyed.body.id]);
    expect((await call(sys.baseUrl, revoked.key, 'GET', '/recordings')).status).toBe(401);

    // Credits reconcile: the three successful conversions (one replayed for free), nothing for the 503s.
    const usage = await call(sys.baseUrl, user.key, 'GET', '/usage');
    expect(usage.body.credits.monthly_remaining).toBe(97);
    expect(usage.body.counters.conversions).toBe(3);
    const ledger = await sys.admin.billing.listLedgerEntries({ userId: user.user.id, pageSize: 100, pageToken: '' });
    expect(ledger.entries.filter((e) => e.kind === 'commit')).toHaveLength(3);

    expect(bugReports(f.lines)).toEqual([]);
  });

  it('gives nothing for free once Redis restarted empty: a used key with another body, or the same one, is 409 and charged nothing (issue #30)', async () => {
    const { sys } = f;
    const user = await sys.newUser('redis-empty@example.com');
    const convert = (transcript: string) => call(sys.baseUrl, user.key, 'POST', '/convert', { transcript, kind: 'summary' }, { 'idempotency-key': 'redis-empty-1' });
    expect((await convert(TRANSCRIPT)).status).toBe(200);
    const charged = (await call(sys.baseUrl, user.key, 'GET', '/usage')).body.credits.monthly_remaining;

    await f.redis.kill();
    await f.redis.start();
    await eventually('usage answers again', async () => (await call(sys.baseUrl, user.key, 'GET', '/usage')).status === 200);

    // The gateway's record is gone; billing's reservation still knows the request the key was for.
    const other = await convert(`${TRANSCRIPT} `.repeat(40));
    expect([other.status, other.code]).toEqual([409, 'idempotency_conflict']);
    const same = await convert(TRANSCRIPT);
    expect([same.status, same.code]).toEqual([409, 'idempotency_conflict']);
    expect(same.body.error.message).toMatch(/completed and was charged/);
    const usage = (await call(sys.baseUrl, user.key, 'GET', '/usage')).body;
    expect([usage.credits.monthly_remaining, usage.counters.conversions]).toEqual([charged, 1]);
    expect(bugReports(f.lines)).toEqual([]);
  });

  it('keeps the revocation channel working after Redis came back: a cached key, revoked, fails on its next request', async () => {
    const { sys } = f;
    // The gateway caches nothing for a while after its channel came back; move past that.
    sys.authClock.advance(RESET_SETTLE_MS + 1_000);
    const user = await sys.newUser('redis-after@example.com', auth.KeyExpiry.KEY_EXPIRY_90_DAYS);
    expect((await call(sys.baseUrl, user.key, 'GET', '/recordings')).status).toBe(200); // now cached
    const served = await call(sys.baseUrl, user.key, 'GET', '/recordings');
    expect(served.status).toBe(200);
    await sys.admin.auth.revokeApiKey({ keyId: user.keyId, userId: user.user.id });
    const after = await call(sys.baseUrl, user.key, 'GET', '/recordings');
    expect([after.status, after.code]).toEqual([401, 'invalid_api_key']);
  });
});
