import { type MurmurError } from '@murmur/contract';
import { createLogger, type Database, newId, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, ManualClock, testAccess } from '@murmur/kit/testing';
import { billing } from '@murmur/proto';
import { type RateLimiter, type RateLimitState, startBillingService, type RunningBillingService } from '../src/index';
import { openBillingDatabase } from './support/database';

const { OPERATION_TRANSCRIBE: TRANSCRIBE, OPERATION_CONVERT: CONVERT } = billing.Operation;
const log = createLogger('billing-usage-history-test', 'silent');

/** Admits every hit: these tests make many charges a minute, and the rate limit is tested in charging.test.ts. */
class UnlimitedRateLimiter implements RateLimiter {
  async hit(_userId: string, limit: number, windowSeconds: number): Promise<RateLimitState & { allowed: boolean }> {
    return { limit, remaining: limit, windowSeconds, resetSeconds: 0, allowed: true };
  }
  async peek(_userId: string, limit: number, windowSeconds: number): Promise<RateLimitState> {
    return { limit, remaining: limit, windowSeconds, resetSeconds: 0 };
  }
}

const zero = (date: string): billing.DailyUsage => ({ date, credits: 0, transcriptions: 0, conversions: 0 });

describe('GetUsageHistory over gRPC: credits per day this period and the latest charges (real Postgres: DATABASE_URL or a cluster of our own)', () => {
  const clock = new ManualClock('2026-03-05T10:00:00Z');
  let db: Database;
  let service: RunningBillingService;
  let api: PromiseClient<billing.BillingServiceClient>;

  beforeAll(async () => {
    db = await openBillingDatabase(8);
    service = await startBillingService({
      access: testAccess('billing'),
      db,
      log,
      address: '127.0.0.1:0',
      clock,
      rateLimiter: new UnlimitedRateLimiter(),
      sweepIntervalMs: 0,
    });
    api = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${service.port}`, { deadlineMs: 30_000 });
  });

  afterAll(async () => {
    api?.close();
    await service?.stop();
    await db?.close();
  });

  beforeEach(() => clock.set('2026-03-05T10:00:00Z'));

  const newUser = () => newId('usr');
  const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as MurmurError);
  const history = (userId: string, recentLimit = 0) => api.getUsageHistory({ userId, recentLimit });
  let keys = 0;
  /** Holds `held` credits through the service's own Reserve; by default for a day, so it can be committed on the next. */
  const reserve = async (userId: string, operation: billing.Operation, held: number, holdSeconds = 86_400) =>
    (
      await api.reserve({
        userId,
        operation,
        credits: held,
        idempotencyKey: `usage-history-${(keys += 1)}`,
        admissionId: '',
        audioSeconds: 0,
        transcriptChars: 0,
        holdSeconds,
        requestFingerprint: 'fp',
      })
    ).reservation!;
  const commit = async (userId: string, reservationId: string, credits: number) =>
    (await api.commit({ userId, reservationId, credits, usageSeconds: 0, audioSeconds: 0 })).reservation!;
  /** One AI call charged now: Reserve `held`, Commit `credits` (≤ held). Returns the reservation id. */
  const charge = async (userId: string, operation: billing.Operation, credits: number, held = credits) => {
    const r = await reserve(userId, operation, held);
    await commit(userId, r.id, credits);
    return r.id;
  };

  it('answers one day per UTC day from the period start through today, quiet days as zeros, with each day\'s sums and counts per kind', async () => {
    const userId = newUser();
    clock.set('2026-03-02T09:00:00Z');
    await charge(userId, TRANSCRIBE, 3);
    await charge(userId, CONVERT, 2, 6); // the committed 2 count, not the 6 held
    clock.set('2026-03-02T23:59:59.999Z');
    await charge(userId, TRANSCRIBE, 4); // the last millisecond of the day is still that day
    clock.set('2026-03-03T20:00:00Z');
    const lateHold = await reserve(userId, CONVERT, 9);
    clock.set('2026-03-04T00:00:00.000Z');
    await charge(userId, CONVERT, 1); // the first millisecond of a day is that day
    clock.set('2026-03-04T17:30:00Z');
    await commit(userId, lateHold.id, 5); // reserved on the 3rd, charged (settled) on the 4th
    await charge(userId, TRANSCRIBE, 7);
    clock.set('2026-03-06T08:00:00Z');

    const answer = await history(userId);
    const usage = (await api.getUsage({ userId })).usage!;
    expect(answer.periodStart).toEqual(new Date('2026-03-01T00:00:00Z'));
    expect(answer.periodEnd).toEqual(new Date('2026-04-01T00:00:00Z'));
    expect([answer.periodStart, answer.periodEnd]).toEqual([usage.periodStart, usage.periodEnd]);
    expect(answer.days).toEqual([
      zero('2026-03-01'),
      { date: '2026-03-02', credits: 9, transcriptions: 2, conversions: 1 },
      zero('2026-03-03'),
      { date: '2026-03-04', credits: 13, transcriptions: 1, conversions: 2 },
      zero('2026-03-05'),
      zero('2026-03-06'),
    ]);
    // The chart adds up to GetUsage's counters of the period.
    const sum = (pick: (d: billing.DailyUsage) => number) => answer.days.reduce((total, d) => total + pick(d), 0);
    expect([sum((d) => d.credits), sum((d) => d.transcriptions), sum((d) => d.conversions)]).toEqual([
      usage.creditsUsed,
      usage.transcriptions,
      usage.conversions,
    ]);
  });

  it('opens a user with no account yet, as GetUsage does: every day so far at zero, no charges', async () => {
    const userId = newUser();
    clock.set('2026-05-03T12:00:00Z');
    expect(await history(userId)).toEqual({
      periodStart: new Date('2026-05-01T00:00:00Z'),
      periodEnd: new Date('2026-06-01T00:00:00Z'),
      days: [zero('2026-05-01'), zero('2026-05-02'), zero('2026-05-03')],
      recent: [],
    });
    expect((await api.listLedgerEntries({ userId, pageSize: 0, pageToken: '' })).entries).toHaveLength(1);
  });

  it('answers the first day of a period at its first instant', async () => {
    const userId = newUser();
    clock.set('2026-07-01T00:00:00Z');
    await charge(userId, CONVERT, 2);
    expect((await history(userId)).days).toEqual([{ date: '2026-07-01', credits: 2, transcriptions: 0, conversions: 1 }]);
  });

  it('counts only committed charges: a released, an expired and a held reservation cost nothing', async () => {
    const userId = newUser();
    const charged = await charge(userId, TRANSCRIBE, 2);
    const released = await reserve(userId, TRANSCRIBE, 5);
    await api.release({ userId, reservationId: released.id, reason: 'engine failed' });
    const expired = await reserve(userId, CONVERT, 4, 60);
    clock.advance(60_000);
    const held = await reserve(userId, CONVERT, 3);

    const answer = await history(userId);
    expect(answer.days).toEqual([
      zero('2026-03-01'),
      zero('2026-03-02'),
      zero('2026-03-03'),
      zero('2026-03-04'),
      { date: '2026-03-05', credits: 2, transcriptions: 1, conversions: 0 },
    ]);
    expect(answer.recent.map((c) => c.reservationId)).toEqual([charged]);
    const states = await db.query<{ id: string; state: string }>('SELECT id, state FROM reservations WHERE user_id = $1 ORDER BY created_at, id', [userId]);
    expect(new Map(states.map((r) => [r.id, r.state]))).toEqual(
      new Map([[charged, 'committed'], [released.id, 'released'], [expired.id, 'expired'], [held.id, 'held']]),
    );
  });

  it('never answers with another user\'s charges', async () => {
    const [alice, bob] = [newUser(), newUser()];
    const alices = [await charge(alice, TRANSCRIBE, 3), await charge(alice, CONVERT, 1)];
    const bobs = [await charge(bob, CONVERT, 10), await charge(bob, CONVERT, 20), await charge(bob, TRANSCRIBE, 30)];

    const forAlice = await history(alice, 100);
    expect(forAlice.recent.map((c) => c.reservationId).sort()).toEqual([...alices].sort());
    expect(forAlice.days[forAlice.days.length - 1]).toEqual({ date: '2026-03-05', credits: 4, transcriptions: 1, conversions: 1 });
    const forBob = await history(bob, 100);
    expect(forBob.recent.map((c) => c.reservationId).sort()).toEqual([...bobs].sort());
    expect(forBob.days[forBob.days.length - 1]).toEqual({ date: '2026-03-05', credits: 60, transcriptions: 1, conversions: 2 });
  });

  it('lists the latest charges newest first, cut at recent_limit, each with its kind, credits, spend and time', async () => {
    const userId = newUser();
    await api.adjustCredits({ userId, monthlyCredits: 0, prepaidCredits: 50, note: 'test setup' });
    await api.setSpendingCap({ userId, capCents: 1_000 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.set(new Date(Date.parse('2026-03-05T10:00:00Z') + i * 60_000));
      ids.push(await charge(userId, i % 2 ? CONVERT : TRANSCRIBE, i + 1, i + 3));
    }

    const { recent } = await history(userId, 3);
    expect(recent).toEqual([
      { reservationId: ids[4], operation: TRANSCRIBE, credits: 5, spendCents: 5, chargedAt: new Date('2026-03-05T10:04:00Z') },
      { reservationId: ids[3], operation: CONVERT, credits: 4, spendCents: 4, chargedAt: new Date('2026-03-05T10:03:00Z') },
      { reservationId: ids[2], operation: TRANSCRIBE, credits: 3, spendCents: 3, chargedAt: new Date('2026-03-05T10:02:00Z') },
    ]);
    expect((await history(userId, 100)).recent.map((c) => c.reservationId)).toEqual([...ids].reverse());
  });

  it('orders charges of the same instant by reservation id, the same way every time', async () => {
    const userId = newUser();
    const ids = [await charge(userId, TRANSCRIBE, 1), await charge(userId, CONVERT, 1), await charge(userId, TRANSCRIBE, 1)];
    const expected = [...ids].sort().reverse();
    expect((await history(userId)).recent.map((c) => c.reservationId)).toEqual(expected);
    expect((await history(userId, 2)).recent.map((c) => c.reservationId)).toEqual(expected.slice(0, 2));
  });

  it('returns 20 charges when recent_limit is 0 and up to 100 when asked', async () => {
    const userId = newUser();
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) {
      clock.advance(1_000);
      ids.push(await charge(userId, CONVERT, 1));
    }
    const newestFirst = [...ids].reverse();
    expect((await history(userId, 0)).recent.map((c) => c.reservationId)).toEqual(newestFirst.slice(0, 20));
    expect((await history(userId, 100)).recent.map((c) => c.reservationId)).toEqual(newestFirst);
  });

  it.each([101, -1])('refuses recent_limit %i with invalid_request, param recent_limit', async (recentLimit) => {
    expect(await errorOf(history(newUser(), recentLimit))).toMatchObject({ code: 'invalid_request', param: 'recent_limit' });
  });

  it.each(['', 'usr_!!', 'key_abc'])('refuses user_id %j with invalid_request, param user_id', async (userId) => {
    expect(await errorOf(history(userId))).toMatchObject({ code: 'invalid_request', param: 'user_id' });
  });

  it('leaves charges of the previous period out of the days, charting the new period from its first day', async () => {
    const userId = newUser();
    clock.set('2026-01-31T22:00:00Z');
    const january = await charge(userId, TRANSCRIBE, 8);
    const acrossTheBoundary = await reserve(userId, CONVERT, 6);
    clock.set('2026-02-01T15:00:00Z');
    await commit(userId, acrossTheBoundary.id, 6); // settled in February: February's charge
    clock.set('2026-02-02T08:00:00Z');

    const answer = await history(userId);
    expect([answer.periodStart, answer.periodEnd]).toEqual([new Date('2026-02-01T00:00:00Z'), new Date('2026-03-01T00:00:00Z')]);
    expect(answer.days).toEqual([{ date: '2026-02-01', credits: 6, transcriptions: 0, conversions: 1 }, zero('2026-02-02')]);
    // The table of recent calls is not cut at the period start.
    expect(answer.recent.map((c) => c.reservationId)).toEqual([acrossTheBoundary.id, january]);
  });

  it('rolls a period that is over before answering, as GetUsage does', async () => {
    const userId = newUser();
    clock.set('2026-01-20T10:00:00Z');
    await charge(userId, TRANSCRIBE, 5);
    clock.set('2026-04-02T10:00:00Z');
    const answer = await history(userId);
    expect([answer.periodStart, answer.periodEnd]).toEqual([new Date('2026-04-01T00:00:00Z'), new Date('2026-05-01T00:00:00Z')]);
    expect(answer.days).toEqual([zero('2026-04-01'), zero('2026-04-02')]);
    expect((await api.getUsage({ userId })).usage).toMatchObject({ periodStart: answer.periodStart, creditsUsed: 0 });
  });
});
