import { randomBytes } from 'node:crypto';
import { type MurmurError } from '@murmur/contract';
import {
  connectRedis,
  createClient,
  createLogger,
  newId,
  type Database,
  type PromiseClient,
  type Redis,
} from '@murmur/kit';
import {
  createPolicyClient,
  describeIfReal,
  ManualClock,
  testAccess,
  realRedis,
  realRedisUnavailable,
  type RealServer,
} from '@murmur/kit/testing';
import { billing } from '@murmur/proto';
import { MemoryRateLimiter, RedisRateLimiter, startBillingService, type RateLimiter, type RateLimitState, type RunningBillingService } from '../src/index';
import { describeRaces, openBillingDatabase } from './support/database';
const { OPERATION_TRANSCRIBE: TRANSCRIBE, OPERATION_CONVERT: CONVERT } = billing.Operation;
const State = billing.ReservationState;
const START = '2026-01-15T12:00:00Z';
const log = createLogger('billing-charging-test', 'silent');

/**
 * Admits every hit. The credit tests run hundreds of calls for one user at once; the real
 * 10-a-minute limit (tested on its own below) would refuse them before their credits are looked at.
 */
class UnlimitedRateLimiter implements RateLimiter {
  async hit(_userId: string, limit: number, windowSeconds: number): Promise<RateLimitState & { allowed: boolean }> {
    return { limit, remaining: limit, windowSeconds, resetSeconds: 0, allowed: true };
  }
  async peek(_userId: string, limit: number, windowSeconds: number): Promise<RateLimitState> {
    return { limit, remaining: limit, windowSeconds, resetSeconds: 0 };
  }
}

type BillingClient = PromiseClient<billing.BillingServiceClient>;

describe('charging over gRPC: admission, reserve → commit / release, expiry (real Postgres: DATABASE_URL or a cluster of our own)', () => {
  const clock = new ManualClock(START);
  let db: Database;
  /** Real in-process limiter: 10 AI requests a minute. */
  let limited: RunningBillingService;
  let api: BillingClient;
  /** Same database and clock, a limiter that admits everything (credit races). */
  let unlimited: RunningBillingService;
  let fast: BillingClient;

  beforeAll(async () => {
    db = await openBillingDatabase(24);
    limited = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', clock, rateLimiter: new MemoryRateLimiter(clock), sweepIntervalMs: 0 });
    unlimited = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', clock, rateLimiter: new UnlimitedRateLimiter(), sweepIntervalMs: 0 });
    api = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${limited.port}`, { deadlineMs: 30_000 });
    fast = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${unlimited.port}`, { deadlineMs: 30_000 });
  });

  afterAll(async () => {
    api?.close();
    fast?.close();
    await limited?.stop();
    await unlimited?.stop();
    await db?.close();
  });

  beforeEach(() => clock.set(START));

  const newUser = () => newId('usr');
  const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as MurmurError);
  const usage = async (userId: string) => (await api.getUsage({ userId })).usage!;
  const rateLimit = async (userId: string) => (await api.getRateLimit({ userId })).rateLimit!;
  const key = () => `idem-${randomBytes(6).toString('hex')}`;
  const reserveRequest = (userId: string, over: Partial<billing.ReserveRequest> = {}): billing.ReserveRequest => ({
    userId,
    operation: TRANSCRIBE,
    credits: 1,
    idempotencyKey: key(),
    admissionId: '',
    audioSeconds: 0,
    transcriptChars: 0,
    holdSeconds: 0,
    requestFingerprint: 'fp',
    ...over,
  });
  const reserve = async (client: BillingClient, userId: string, over: Partial<billing.ReserveRequest> = {}) =>
    (await client.reserve(reserveRequest(userId, over))).reservation!;
  /** Sets both balances (one adjust row) and the cap. */
  const setBalances = async (userId: string, monthlyCredits: number, prepaidCredits: number, capCents?: number) => {
    await api.adjustCredits({ userId, monthlyCredits, prepaidCredits, note: 'test setup' });
    if (capCents !== undefined) await api.setSpendingCap({ userId, capCents });
  };
  const balances = async (userId: string) => {
    const u = await usage(userId);
    return { monthly: u.monthlyCreditsRemaining, prepaid: u.prepaidCreditsRemaining, spend: u.spendCents, reserved: u.creditsReserved };
  };
  interface Row {
    kind: string;
    monthly: number;
    prepaid: number;
    spend: number;
    reservation_id: string | null;
    note: string;
  }
  const ledgerRows = (userId: string) =>
    db.query<Row>(
      `SELECT kind, monthly_delta::int AS monthly, prepaid_delta::int AS prepaid, spend_delta_cents::int AS spend, reservation_id, note
       FROM ledger_entries WHERE user_id = $1 ORDER BY created_at, seq`,
      [userId],
    );
  /** The ledger sums to the balances, and `reserved` is the sum of what held reservations hold. */
  const expectReconciled = async (userId: string) => {
    const u = await usage(userId);
    const [sums] = await db.query<{ monthly: number; prepaid: number; spend: number }>(
      `SELECT coalesce(sum(monthly_delta), 0)::int AS monthly, coalesce(sum(prepaid_delta), 0)::int AS prepaid,
              coalesce(sum(spend_delta_cents), 0)::int AS spend
       FROM ledger_entries WHERE user_id = $1`,
      [userId],
    );
    const [held] = await db.query<{ credits: number }>(
      `SELECT coalesce(sum(credits), 0)::int AS credits FROM reservations WHERE user_id = $1 AND state = 'held'`,
      [userId],
    );
    expect({ ...sums, reserved: held!.credits }).toEqual({
      monthly: u.monthlyCreditsRemaining,
      prepaid: u.prepaidCreditsRemaining,
      spend: u.spendCents,
      reserved: u.creditsReserved,
    });
  };
  const stateOf = async (id: string) => (await db.query<{ state: string }>('SELECT state FROM reservations WHERE id = $1', [id]))[0]?.state;

  describe('Reserve', () => {
    it('holds credits monthly first, then prepaid, counting the prepaid spend at once, with one reserve row', async () => {
      const userId = newUser();
      await setBalances(userId, 3, 20, 1_000);
      const r = await reserve(api, userId, { credits: 10, holdSeconds: 0 });
      expect(r).toMatchObject({
        userId,
        operation: TRANSCRIBE,
        credits: 10,
        monthlyCredits: 3,
        prepaidCredits: 7,
        state: State.RESERVATION_STATE_HELD,
        createdAt: new Date(START),
        expiresAt: new Date(Date.parse(START) + 900_000), // hold_seconds 0 → 15 minutes
      });
      expect(r.id).toMatch(/^rsv_/);
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 13, spend: 7, reserved: 10 });
      const rows = await ledgerRows(userId);
      expect(rows[rows.length - 1]).toMatchObject({ kind: 'reserve', monthly: -3, prepaid: -7, spend: 7, reservation_id: r.id });
      await expectReconciled(userId);
    });

    it.each<[string, Partial<billing.ReserveRequest>, number]>([
      ['a transcription by its started minutes', { operation: TRANSCRIBE, credits: 0, audioSeconds: 61 }, 2],
      ['a transcription of exactly one hour', { operation: TRANSCRIBE, credits: 0, audioSeconds: 3_600 }, 60],
      ['a transcription of zero seconds at the one-credit minimum', { operation: TRANSCRIBE, credits: 0, audioSeconds: 0 }, 1],
      ['a conversion by its started 1,000 characters', { operation: CONVERT, credits: 0, transcriptChars: 1_001 }, 2],
      ['an empty conversion at the one-credit minimum', { operation: CONVERT, credits: 0, transcriptChars: 0 }, 1],
      ['an explicit amount, whatever the quantity', { operation: TRANSCRIBE, credits: 5, audioSeconds: 600 }, 5],
    ])('prices %s', async (_name, over, credits) => {
      const userId = newUser();
      expect(await reserve(api, userId, over)).toMatchObject({ credits, monthlyCredits: credits });
      expect((await usage(userId)).monthlyCreditsRemaining).toBe(100 - credits);
    });

    it.each<[string, string, Partial<billing.ReserveRequest>]>([
      ['an empty idempotency key', 'idempotency_key', { idempotencyKey: '' }],
      ['an idempotency key of 256 characters', 'idempotency_key', { idempotencyKey: 'k'.repeat(256) }],
      ['an idempotency key with a space (the contract allows printable ASCII only)', 'idempotency_key', { idempotencyKey: 'two words' }],
      ['an unspecified operation', 'operation', { operation: billing.Operation.OPERATION_UNSPECIFIED }],
      ['negative credits', 'credits', { credits: -1 }],
      ['negative audio seconds', 'audio_seconds', { credits: 0, audioSeconds: -1 }],
      ['negative transcript characters', 'transcript_chars', { operation: CONVERT, credits: 0, transcriptChars: -5 }],
      ['a hold longer than a day', 'hold_seconds', { holdSeconds: 86_401 }],
      ['a malformed admission id', 'admission_id', { admissionId: 'adm_!!' }],
    ])('rejects %s with param %s and charges nothing', async (_name, param, over) => {
      const userId = newUser();
      expect(await errorOf(api.reserve(reserveRequest(userId, over)))).toMatchObject({ code: 'invalid_request', param });
      expect(await balances(userId)).toEqual({ monthly: 100, prepaid: 0, spend: 0, reserved: 0 });
    });

    it('accepts an idempotency key of exactly 255 characters', async () => {
      expect(await reserve(api, newUser(), { idempotencyKey: 'k'.repeat(255) })).toMatchObject({ state: State.RESERVATION_STATE_HELD });
    });

    it('returns the same reservation for the same key and holds once', async () => {
      const userId = newUser();
      const idempotencyKey = key();
      const first = await reserve(api, userId, { credits: 4, idempotencyKey });
      const again = await reserve(api, userId, { credits: 4, idempotencyKey });
      expect(again).toEqual(first);
      expect(await balances(userId)).toEqual({ monthly: 96, prepaid: 0, spend: 0, reserved: 4 });
      expect((await ledgerRows(userId)).filter((r) => r.kind === 'reserve')).toHaveLength(1);
      // A replay is not a new AI call: it takes no rate-limit slot.
      expect((await rateLimit(userId)).remaining).toBe(9);
    });

    it('answers a replay with the reservation as it is now while it holds its key; once released the key is free and reserves anew', async () => {
      const userId = newUser();
      const idempotencyKey = key();
      const r = await reserve(api, userId, { idempotencyKey });
      expect(await reserve(api, userId, { idempotencyKey })).toMatchObject({ id: r.id, state: State.RESERVATION_STATE_HELD });
      await api.release({ userId, reservationId: r.id, reason: 'engine failed' });
      expect(await balances(userId)).toEqual({ monthly: 100, prepaid: 0, spend: 0, reserved: 0 });
      const again = await reserve(api, userId, { idempotencyKey });
      expect(again).toMatchObject({ state: State.RESERVATION_STATE_HELD, credits: 1 });
      expect(again.id).not.toBe(r.id);
      expect(await balances(userId)).toEqual({ monthly: 99, prepaid: 0, spend: 0, reserved: 1 });
      await expectReconciled(userId);
    });

    it('scopes idempotency keys per user', async () => {
      const [a, b] = [newUser(), newUser()];
      const [ra, rb] = [await reserve(api, a, { idempotencyKey: 'same' }), await reserve(api, b, { idempotencyKey: 'same' })];
      expect(ra.id).not.toBe(rb.id);
    });
  });

  describe('credits and the spending cap', () => {
    it('with nothing left refuses AdmitAiRequest and Reserve with insufficient_tokens, before taking a slot', async () => {
      const userId = newUser();
      await setBalances(userId, 0, 0, 1_000);
      expect(await errorOf(api.admitAiRequest({ userId, operation: CONVERT }))).toMatchObject({ code: 'insufficient_tokens' });
      expect(await errorOf(api.reserve(reserveRequest(userId)))).toMatchObject({ code: 'insufficient_tokens' });
      expect((await rateLimit(userId)).remaining).toBe(10);
    });

    it("refuses a conversion over the plan's max_transcript_chars before anything: no hold, no ledger row, the admission still unused", async () => {
      const userId = newUser();
      await setBalances(userId, 1_000, 0, 1_000);
      const max = (await usage(userId)).plan!.maxTranscriptChars;
      const rows = await ledgerRows(userId);
      const { admissionId } = await api.admitAiRequest({ userId, operation: CONVERT });
      const over = { operation: CONVERT, credits: 0, transcriptChars: max + 1, admissionId };
      const err = await errorOf(api.reserve(reserveRequest(userId, over)));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'transcript', meta: { max_transcript_chars: String(max), transcript_chars: String(max + 1) } });
      expect(err!.message).toContain(`converts at most ${max.toLocaleString('en-US')} characters per request`);
      expect(await balances(userId)).toEqual({ monthly: 1_000, prepaid: 0, spend: 0, reserved: 0 });
      expect(await ledgerRows(userId)).toEqual(rows);
      // At the limit it holds, with the same admission: the refusal did not use it up.
      const r = await reserve(api, userId, { ...over, transcriptChars: max });
      expect(r.credits).toBe(Math.ceil(max / 1_000));
    });

    it('refuses a reserve larger than both balances: nothing partial, no ledger row', async () => {
      const userId = newUser();
      await setBalances(userId, 3, 1, 1_000);
      const rows = await ledgerRows(userId);
      const err = await errorOf(api.reserve(reserveRequest(userId, { credits: 5 })));
      expect(err).toMatchObject({ code: 'insufficient_tokens' });
      expect(err!.message).toContain('needs 5 AI Credits and 4 are left');
      expect(await balances(userId)).toEqual({ monthly: 3, prepaid: 1, spend: 0, reserved: 0 });
      expect(await ledgerRows(userId)).toEqual(rows);
    });

    it('monthly exhausted, prepaid available, cap reached: AdmitAiRequest and Reserve refuse; a higher cap lets the next call through', async () => {
      const userId = newUser();
      await setBalances(userId, 0, 50, 0); // the free plan's cap: no prepaid credit may be drawn
      expect(await errorOf(api.admitAiRequest({ userId, operation: TRANSCRIBE }))).toMatchObject({ code: 'spending_cap_reached' });
      expect(await errorOf(api.reserve(reserveRequest(userId)))).toMatchObject({ code: 'spending_cap_reached' });
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 50, spend: 0, reserved: 0 });
      expect((await rateLimit(userId)).remaining).toBe(10);

      await api.setSpendingCap({ userId, capCents: 2 });
      const { admissionId } = await api.admitAiRequest({ userId, operation: TRANSCRIBE });
      const r = await reserve(api, userId, { credits: 2, admissionId });
      expect(r).toMatchObject({ monthlyCredits: 0, prepaidCredits: 2 });
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 48, spend: 2, reserved: 2 });
      // Spend held by a running reservation counts: the cap is reached again.
      expect(await errorOf(api.admitAiRequest({ userId, operation: TRANSCRIBE }))).toMatchObject({ code: 'spending_cap_reached' });
    });

    it('refuses a prepaid part that would pass the cap, though some of it would fit, and charges nothing', async () => {
      const userId = newUser();
      await setBalances(userId, 2, 50, 3);
      const err = await errorOf(api.reserve(reserveRequest(userId, { credits: 6 })));
      expect(err).toMatchObject({ code: 'spending_cap_reached' });
      expect(err!.message).toContain('4 prepaid credits');
      expect(await balances(userId)).toEqual({ monthly: 2, prepaid: 50, spend: 0, reserved: 0 });
      expect(await reserve(api, userId, { credits: 5 })).toMatchObject({ monthlyCredits: 2, prepaidCredits: 3 });
    });
  });

  describeRaces('concurrency (the account row lock and the CHECK constraints)', () => {
    it('holds once when duplicates of one idempotency key race', async () => {
      const userId = newUser();
      const raced = await Promise.all(Array.from({ length: 8 }, () => reserve(fast, userId, { credits: 4, idempotencyKey: 'raced' })));
      expect(new Set(raced.map((r) => r.id)).size).toBe(1);
      expect(await balances(userId)).toEqual({ monthly: 96, prepaid: 0, spend: 0, reserved: 4 });
      expect((await ledgerRows(userId)).filter((r) => r.kind === 'reserve')).toHaveLength(1);
    });

    // The next three race on an account that exists, so the lock is waited for: the lock's query
    // reads the reservation or admission ahead, as of before the wait (account-lock.ts), and what
    // it read must not be trusted once the transaction waited for has changed it.
    it('holds once when duplicates of one idempotency key race on an open account', async () => {
      const userId = newUser();
      await usage(userId);
      const raced = await Promise.all(Array.from({ length: 8 }, () => reserve(fast, userId, { credits: 4, idempotencyKey: 'raced-open' })));
      expect(new Set(raced.map((r) => r.id)).size).toBe(1);
      expect(await balances(userId)).toEqual({ monthly: 96, prepaid: 0, spend: 0, reserved: 4 });
      expect((await ledgerRows(userId)).filter((r) => r.kind === 'reserve')).toHaveLength(1);
    });

    it('commits once when duplicate commits race; every one answers the committed reservation', async () => {
      const userId = newUser();
      const r = await reserve(fast, userId, { credits: 4 });
      const raced = await Promise.all(Array.from({ length: 8 }, () => fast.commit({ userId, reservationId: r.id, credits: 3, usageSeconds: 0, audioSeconds: 0 })));
      for (const { reservation } of raced) expect(reservation).toMatchObject({ id: r.id, state: State.RESERVATION_STATE_COMMITTED, credits: 3 });
      expect(await balances(userId)).toEqual({ monthly: 97, prepaid: 0, spend: 0, reserved: 0 });
      expect((await ledgerRows(userId)).filter((row) => row.kind === 'commit')).toHaveLength(1);
      await expectReconciled(userId);
    });

    it('answers a commit that raced a renewal with the reservation as stored (a renewal changes only the reservation)', async () => {
      for (let i = 0; i < 10; i++) {
        const userId = newUser();
        const r = await reserve(fast, userId, { credits: 2, holdSeconds: 60 });
        const [renewed, committed] = await Promise.all([
          fast.renewReservation({ userId, reservationId: r.id, holdSeconds: 600 }),
          fast.commit({ userId, reservationId: r.id, credits: 2, usageSeconds: 0, audioSeconds: 0 }),
        ]);
        const [row] = await db.query<{ expires_at: Date }>('SELECT expires_at FROM reservations WHERE id = $1', [r.id]);
        expect(committed.reservation!.expiresAt!.getTime()).toBe(row!.expires_at.getTime());
        expect(renewed.reservation!.expiresAt!.getTime()).toBe(row!.expires_at.getTime());
      }
    });

    it('lets one admission be used once when reserves carrying it race', async () => {
      const userId = newUser();
      const { admissionId } = await api.admitAiRequest({ userId, operation: TRANSCRIBE });
      const raced = await Promise.allSettled(Array.from({ length: 8 }, () => reserve(fast, userId, { credits: 2, admissionId })));
      const held = raced.filter((s) => s.status === 'fulfilled');
      expect(held).toHaveLength(1);
      for (const s of raced) {
        if (s.status === 'rejected') expect(s.reason).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/already used/) });
      }
      expect(await balances(userId)).toEqual({ monthly: 98, prepaid: 0, spend: 0, reserved: 2 });
      await expectReconciled(userId);
    });

    it('200 concurrent reserves of 1 credit against 37: exactly 37 succeed, balance 0, 37 reserve rows, the rest insufficient_tokens', async () => {
      const userId = newUser();
      await setBalances(userId, 37, 0, 0);
      const results = await Promise.allSettled(Array.from({ length: 200 }, () => reserve(fast, userId)));
      const ok = results.filter((r) => r.status === 'fulfilled');
      const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as MurmurError).code] : []));
      expect(ok).toHaveLength(37);
      expect(codes).toEqual(Array(163).fill('insufficient_tokens'));
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 0, spend: 0, reserved: 37 });
      expect((await ledgerRows(userId)).filter((r) => r.kind === 'reserve')).toHaveLength(37);
      await expectReconciled(userId);
    });

    it('a cap allowing exactly 7 prepaid credits lets exactly 7 of 40 concurrent draws through', async () => {
      const userId = newUser();
      await setBalances(userId, 0, 100, 7);
      const results = await Promise.allSettled(Array.from({ length: 40 }, () => reserve(fast, userId)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(7);
      const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as MurmurError).code] : []));
      expect(codes).toEqual(Array(33).fill('spending_cap_reached'));
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 93, spend: 7, reserved: 7 });
    });

    it('mixed: 20 monthly, 50 prepaid, cap 15 → exactly 35 of 100 concurrent reserves; monthly drawn before prepaid', async () => {
      const userId = newUser();
      await setBalances(userId, 20, 50, 15);
      const results = await Promise.allSettled(Array.from({ length: 100 }, () => reserve(fast, userId)));
      const held = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(held).toHaveLength(35);
      expect(held.filter((r) => r.monthlyCredits === 1)).toHaveLength(20);
      expect(held.filter((r) => r.prepaidCredits === 1)).toHaveLength(15);
      const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as MurmurError).code] : []));
      expect(codes).toEqual(Array(65).fill('spending_cap_reached'));
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 35, spend: 15, reserved: 35 });
      // Every monthly draw happened before any prepaid one.
      const draws = (await ledgerRows(userId)).filter((r) => r.kind === 'reserve');
      expect(draws.map((r) => (r.monthly === -1 ? 'm' : 'p')).join('')).toBe('m'.repeat(20) + 'p'.repeat(15));
    });

    it('keeps the ledger reconciled with the balances through a mixed concurrent workload', async () => {
      const userId = newUser();
      await setBalances(userId, 300, 200, 120);
      let reserved = 0;
      let committed = 0;
      let charged = 0;
      let released = 0;
      let refused = 0;
      const op = async (i: number) => {
        const credits = 1 + (i % 7);
        let r: billing.Reservation;
        try {
          r = await reserve(fast, userId, { credits, operation: i % 2 ? CONVERT : TRANSCRIBE, idempotencyKey: `mix-${i}` });
        } catch (err) {
          expect(['insufficient_tokens', 'spending_cap_reached']).toContain((err as MurmurError).code);
          refused += 1;
          return;
        }
        reserved += 1;
        switch (i % 5) {
          case 0:
          case 1: {
            const final = i % 5 === 0 ? credits : Math.floor(credits / 2);
            await fast.commit({ userId, reservationId: r.id, credits: final, usageSeconds: 30, audioSeconds: 0 });
            committed += 1;
            charged += final;
            break;
          }
          case 2:
            await fast.release({ userId, reservationId: r.id, reason: 'failed' });
            released += 1;
            break;
          default:
            break; // left held, to expire
        }
      };
      const grants = Array.from({ length: 10 }, () => fast.grantPrepaidCredits({ userId, credits: 5, note: 'purchase' }));
      await Promise.all([...Array.from({ length: 150 }, (_, i) => op(i)), ...grants]);
      expect(reserved + refused).toBe(150);
      expect(reserved).toBeGreaterThan(80);
      await expectReconciled(userId);

      clock.advance(15 * 60_000);
      await limited.sweepExpiredReservations();
      await expectReconciled(userId);
      const u = await usage(userId);
      expect(u).toMatchObject({ creditsReserved: 0, creditsUsed: charged, transcriptions: expect.any(Number) });
      expect(u.transcriptions + u.conversions).toBe(committed);
      const kinds = (await ledgerRows(userId)).map((r) => r.kind);
      const count = (k: string) => kinds.filter((x) => x === k).length;
      expect([count('reserve'), count('commit'), count('release'), count('expire')]).toEqual([reserved, committed, released, reserved - committed - released]);
    });
  });

  describe('Commit and Release', () => {
    it('commits less than held: the rest returns exactly, prepaid first with its spend; usage counted', async () => {
      const userId = newUser();
      await setBalances(userId, 3, 20, 1_000);
      const r = await reserve(api, userId, { credits: 10 });
      const done = (await api.commit({ userId, reservationId: r.id, credits: 4, usageSeconds: 200, audioSeconds: 0 })).reservation!;
      expect(done).toMatchObject({ id: r.id, state: State.RESERVATION_STATE_COMMITTED, credits: 4, monthlyCredits: 3, prepaidCredits: 1 });
      expect(await usage(userId)).toMatchObject({
        monthlyCreditsRemaining: 0,
        prepaidCreditsRemaining: 19,
        spendCents: 1,
        creditsReserved: 0,
        creditsUsed: 4,
        transcriptions: 1,
        transcriptionSeconds: 200,
        conversions: 0,
      });
      const rows = await ledgerRows(userId);
      expect(rows[rows.length - 1]).toMatchObject({ kind: 'commit', monthly: 0, prepaid: 6, spend: -6, reservation_id: r.id });
      await expectReconciled(userId);
    });

    it('commits in full with a zero-delta commit row; a conversion counts as a conversion', async () => {
      const userId = newUser();
      const r = await reserve(api, userId, { operation: CONVERT, credits: 0, transcriptChars: 2_500 });
      await api.commit({ userId, reservationId: r.id, credits: 3, usageSeconds: 0, audioSeconds: 0 });
      expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 97, creditsUsed: 3, conversions: 1, transcriptions: 0, creditsReserved: 0 });
      const rows = await ledgerRows(userId);
      expect(rows[rows.length - 1]).toMatchObject({ kind: 'commit', monthly: 0, prepaid: 0, spend: 0 });
    });

    it('a second commit returns the committed reservation and charges nothing more', async () => {
      const userId = newUser();
      const r = await reserve(api, userId, { credits: 5 });
      const first = (await api.commit({ userId, reservationId: r.id, credits: 2, usageSeconds: 10, audioSeconds: 0 })).reservation;
      const second = (await api.commit({ userId, reservationId: r.id, credits: 5, usageSeconds: 99, audioSeconds: 0 })).reservation;
      expect(second).toEqual(first);
      expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 98, creditsUsed: 2, transcriptions: 1, transcriptionSeconds: 10 });
    });

    it('refuses a final amount above what is held, with param credits', async () => {
      const userId = newUser();
      const r = await reserve(api, userId, { credits: 5 });
      expect(await errorOf(api.commit({ userId, reservationId: r.id, credits: 6, usageSeconds: 0, audioSeconds: 0 }))).toMatchObject({ code: 'invalid_request', param: 'credits' });
      expect(await stateOf(r.id)).toBe('held');
    });

    it('release after a failure restores the exact balance, with a release row carrying the reason; releasing again changes nothing', async () => {
      const userId = newUser();
      await setBalances(userId, 3, 20, 1_000);
      const before = await balances(userId);
      const r = await reserve(api, userId, { credits: 10 });
      const released = (await api.release({ userId, reservationId: r.id, reason: 'transcription_failed' })).reservation!;
      expect(released).toMatchObject({ state: State.RESERVATION_STATE_RELEASED, credits: 10, monthlyCredits: 3, prepaidCredits: 7 });
      expect(await balances(userId)).toEqual(before);
      const rows = await ledgerRows(userId);
      expect(rows[rows.length - 1]).toMatchObject({ kind: 'release', monthly: 3, prepaid: 7, spend: -7, note: 'transcription_failed' });
      expect((await api.release({ userId, reservationId: r.id, reason: 'again' })).reservation).toEqual(released);
      expect(await ledgerRows(userId)).toHaveLength(rows.length);
    });

    it('will not commit a released reservation nor release a committed one (param reservation_id)', async () => {
      const userId = newUser();
      const a = await reserve(api, userId);
      await api.release({ userId, reservationId: a.id, reason: '' });
      const err = await errorOf(api.commit({ userId, reservationId: a.id, credits: 1, usageSeconds: 0, audioSeconds: 0 }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'reservation_id' });
      expect(err!.message).toContain('released');
      const b = await reserve(api, userId);
      await api.commit({ userId, reservationId: b.id, credits: 1, usageSeconds: 0, audioSeconds: 0 });
      expect(await errorOf(api.release({ userId, reservationId: b.id, reason: '' }))).toMatchObject({ code: 'invalid_request', param: 'reservation_id' });
    });

    it('answers not_found for an unknown reservation and for another user\'s, touching nothing', async () => {
      const [owner, other] = [newUser(), newUser()];
      const r = await reserve(api, owner);
      for (const reservationId of [newId('rsv'), 'rsv_nope', r.id]) {
        expect(await errorOf(api.commit({ userId: other, reservationId, credits: 1, usageSeconds: 0, audioSeconds: 0 }))).toMatchObject({ code: 'not_found' });
        expect(await errorOf(api.release({ userId: other, reservationId, reason: '' }))).toMatchObject({ code: 'not_found' });
      }
      expect(await stateOf(r.id)).toBe('held');
    });
  });

  describe('expiry of holds never committed nor released', () => {
    it('the sweeper expires a hold at its deadline, not a millisecond before, restoring the exact balance with an expire row', async () => {
      const userId = newUser();
      await setBalances(userId, 3, 20, 1_000);
      const before = await balances(userId);
      const r = await reserve(api, userId, { credits: 10, holdSeconds: 60 });
      clock.advance(59_999);
      await limited.sweepExpiredReservations();
      expect(await stateOf(r.id)).toBe('held');
      clock.advance(1);
      expect(await limited.sweepExpiredReservations()).toBeGreaterThanOrEqual(1);
      expect(await stateOf(r.id)).toBe('expired');
      expect(await balances(userId)).toEqual(before);
      const rows = await ledgerRows(userId);
      expect(rows[rows.length - 1]).toMatchObject({ kind: 'expire', monthly: 3, prepaid: 7, spend: -7, reservation_id: r.id });
      const err = await errorOf(api.commit({ userId, reservationId: r.id, credits: 10, usageSeconds: 0, audioSeconds: 0 }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'reservation_id' });
      expect(err!.message).toContain('expired');
      expect((await api.release({ userId, reservationId: r.id, reason: 'late' })).reservation).toMatchObject({ state: State.RESERVATION_STATE_EXPIRED });
      await expectReconciled(userId);
    });

    it('expires lazily as soon as the account is touched, before any sweep', async () => {
      const userId = newUser();
      const r = await reserve(api, userId, { credits: 10, holdSeconds: 30 });
      clock.advance(30_000);
      expect(await balances(userId)).toEqual({ monthly: 100, prepaid: 0, spend: 0, reserved: 0 });
      expect(await stateOf(r.id)).toBe('expired');
      expect((await ledgerRows(userId)).filter((row) => row.kind === 'expire')).toHaveLength(1);
    });

    it('runs on its own timer with the injected clock, and stop() ends it', async () => {
      const userId = newUser();
      const swept = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', clock, rateLimiter: new UnlimitedRateLimiter(), sweepIntervalMs: 20 });
      try {
        const r = await reserve(api, userId, { credits: 4, holdSeconds: 5 });
        clock.advance(5_000);
        const deadline = Date.now() + 10_000;
        while ((await stateOf(r.id)) === 'held' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(await stateOf(r.id)).toBe('expired');
      } finally {
        await swept.stop();
      }
    });
  });

  describe('RenewReservation: the lease a live holder keeps renewing', () => {
    it('moves the deadline to now + hold_seconds each time; a holder that stops renewing loses the hold one lease later', async () => {
      const userId = newUser();
      const before = await balances(userId);
      const r = await reserve(api, userId, { credits: 5, holdSeconds: 30 });
      for (let i = 0; i < 5; i += 1) {
        clock.advance(20_000);
        const renewed = (await api.renewReservation({ userId, reservationId: r.id, holdSeconds: 30 })).reservation!;
        expect(renewed).toMatchObject({ state: State.RESERVATION_STATE_HELD, credits: 5 });
        expect(renewed.expiresAt!.getTime()).toBe(clock.now().getTime() + 30_000);
      }
      // 100 s after the reserve, five renewals later, still held; then the holder dies.
      await limited.sweepExpiredReservations();
      expect(await stateOf(r.id)).toBe('held');
      clock.advance(29_999);
      expect((await balances(userId)).reserved).toBe(5);
      clock.advance(1);
      expect(await balances(userId)).toEqual(before);
      expect(await stateOf(r.id)).toBe('expired');
      await expectReconciled(userId);
    });

    it('never revives a lapsed lease, and answers settled reservations unchanged', async () => {
      const userId = newUser();
      const lapsed = await reserve(api, userId, { credits: 2, holdSeconds: 10 });
      clock.advance(10_000);
      expect((await api.renewReservation({ userId, reservationId: lapsed.id, holdSeconds: 30 })).reservation).toMatchObject({
        state: State.RESERVATION_STATE_EXPIRED,
      });
      const done = await reserve(api, userId, { credits: 1, holdSeconds: 10 });
      await api.commit({ userId, reservationId: done.id, credits: 1, usageSeconds: 0, audioSeconds: 0 });
      const again = (await api.renewReservation({ userId, reservationId: done.id, holdSeconds: 30 })).reservation!;
      expect(again.state).toBe(State.RESERVATION_STATE_COMMITTED);
      expect(again.expiresAt).toEqual(done.expiresAt);
      await expectReconciled(userId);
    });

    it('refuses another user\'s reservation as not_found and a bad hold_seconds with param hold_seconds', async () => {
      const userId = newUser();
      const r = await reserve(api, userId, { credits: 1, holdSeconds: 10 });
      expect(await errorOf(api.renewReservation({ userId: newUser(), reservationId: r.id, holdSeconds: 10 }))).toMatchObject({ code: 'not_found' });
      expect(await errorOf(api.renewReservation({ userId, reservationId: r.id, holdSeconds: -1 }))).toMatchObject({ code: 'invalid_request', param: 'hold_seconds' });
      expect(await stateOf(r.id)).toBe('held');
    });
  });

  describe('period boundaries with reservations held across them', () => {
    it('one boundary: the reset restores the allowance; settling returns prepaid, not the lapsed monthly part, and refunds no spend', async () => {
      clock.set('2026-01-31T23:00:00Z');
      const userId = newUser();
      await setBalances(userId, 10, 20, 1_000);
      const b = await reserve(api, userId, { credits: 4, holdSeconds: 7_200 }); // 4 monthly
      const a = await reserve(api, userId, { credits: 15, holdSeconds: 7_200 }); // 6 monthly, 9 prepaid
      expect(a).toMatchObject({ monthlyCredits: 6, prepaidCredits: 9 });
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 11, spend: 9, reserved: 19 });

      clock.set('2026-02-01T00:30:00Z');
      expect(await balances(userId)).toEqual({ monthly: 100, prepaid: 11, spend: 0, reserved: 19 });
      const done = (await api.commit({ userId, reservationId: a.id, credits: 8, usageSeconds: 480, audioSeconds: 0 })).reservation!;
      expect(done).toMatchObject({ credits: 8, monthlyCredits: 6, prepaidCredits: 2 });
      await api.release({ userId, reservationId: b.id, reason: 'failed' });
      expect(await usage(userId)).toMatchObject({
        monthlyCreditsRemaining: 100, // not 104: b's 4 monthly credits were January's
        prepaidCreditsRemaining: 18, // 20 − the 2 prepaid a kept
        spendCents: 0, // a's spend was January's; February's is untouched (and never negative)
        creditsReserved: 0,
        creditsUsed: 8,
        periodStart: new Date('2026-02-01T00:00:00Z'),
      });
      const rows = await ledgerRows(userId);
      const [reset, commit, release] = rows.slice(-3);
      expect(reset).toMatchObject({ kind: 'reset', monthly: 100, spend: -9 });
      expect(commit).toMatchObject({ kind: 'commit', monthly: 0, prepaid: 7, spend: 0 });
      expect(release).toMatchObject({ kind: 'release', monthly: 0, prepaid: 0, spend: 0 });
      expect(release!.note).toContain('4 monthly credits of period 2026-01 not returned');
      await expectReconciled(userId);

      // Within the new period, the monthly part returns again.
      const c = await reserve(api, userId, { credits: 5 });
      await api.release({ userId, reservationId: c.id, reason: '' });
      expect(await balances(userId)).toEqual({ monthly: 100, prepaid: 18, spend: 0, reserved: 0 });
    });

    it('three boundaries: one reset, then the expired hold returns its prepaid part only', async () => {
      const userId = newUser();
      await setBalances(userId, 10, 10, 1_000);
      const r = await reserve(api, userId, { credits: 14, holdSeconds: 86_400 });
      expect(await balances(userId)).toEqual({ monthly: 0, prepaid: 6, spend: 4, reserved: 14 });

      clock.set('2026-04-10T08:00:00Z');
      await limited.sweepExpiredReservations();
      expect(await stateOf(r.id)).toBe('expired');
      expect(await usage(userId)).toMatchObject({
        monthlyCreditsRemaining: 100,
        prepaidCreditsRemaining: 10,
        spendCents: 0,
        creditsReserved: 0,
        periodStart: new Date('2026-04-01T00:00:00Z'),
      });
      const [reset, expire] = (await ledgerRows(userId)).slice(-2);
      expect(reset).toMatchObject({ kind: 'reset', monthly: 100, spend: -4 });
      expect(reset!.note).toContain('2 idle months skipped');
      expect(expire).toMatchObject({ kind: 'expire', monthly: 0, prepaid: 4, spend: 0, reservation_id: r.id });
      await expectReconciled(userId);
    });
  });

  describe('rate limit (10 AI requests a minute)', () => {
    it('admits exactly 10 of 25 concurrent AdmitAiRequest calls; the rest carry retry_after for Retry-After', async () => {
      const userId = newUser();
      await usage(userId);
      const results = await Promise.allSettled(Array.from({ length: 25 }, () => api.admitAiRequest({ userId, operation: TRANSCRIBE })));
      const admitted = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(admitted).toHaveLength(10);
      expect(admitted.map((a) => a.rateLimit!.remaining).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(new Set(admitted.map((a) => a.admissionId)).size).toBe(10);
      for (const a of admitted) expect(a.admissionId).toMatch(/^adm_/);
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as MurmurError] : []));
      expect(refused).toHaveLength(15);
      for (const err of refused) {
        expect(err).toMatchObject({ code: 'rate_limit_exceeded', meta: { retry_after: '60', limit: '10', remaining: '0', reset: '60' } });
      }
      // Admission charges nothing.
      expect(await balances(userId)).toEqual({ monthly: 100, prepaid: 0, spend: 0, reserved: 0 });
    });

    it('slides: the 11th call waits until the oldest leaves the window, to the millisecond', async () => {
      const userId = newUser();
      for (let i = 0; i < 10; i++) {
        clock.set(new Date(Date.parse(START) + i * 1_000));
        await api.admitAiRequest({ userId, operation: CONVERT });
      }
      clock.set(new Date(Date.parse(START) + 10_000));
      expect(await errorOf(api.admitAiRequest({ userId, operation: CONVERT }))).toMatchObject({ meta: { retry_after: '50' } });
      clock.set(new Date(Date.parse(START) + 59_999));
      expect(await errorOf(api.admitAiRequest({ userId, operation: CONVERT }))).toMatchObject({ code: 'rate_limit_exceeded', meta: { retry_after: '1' } });
      clock.set(new Date(Date.parse(START) + 60_000));
      expect((await api.admitAiRequest({ userId, operation: CONVERT })).rateLimit).toEqual({ limit: 10, remaining: 0, windowSeconds: 60, resetSeconds: 1 });
    });

    it('Reserve without an admission takes a slot; with one it does not', async () => {
      const userId = newUser();
      await reserve(api, userId);
      expect((await rateLimit(userId)).remaining).toBe(9);
      const { admissionId, rateLimit: afterAdmit } = await api.admitAiRequest({ userId, operation: TRANSCRIBE });
      expect(afterAdmit!.remaining).toBe(8);
      const spare = (await api.admitAiRequest({ userId, operation: TRANSCRIBE })).admissionId;
      await reserve(api, userId, { admissionId });
      expect((await rateLimit(userId)).remaining).toBe(7);
      for (let i = 0; i < 7; i++) await reserve(api, userId);
      const before = await balances(userId);
      const err = await errorOf(api.reserve(reserveRequest(userId)));
      expect(err).toMatchObject({ code: 'rate_limit_exceeded', meta: { retry_after: '60', limit: '10', remaining: '0' } });
      expect(await balances(userId)).toEqual(before);
      // An admission taken earlier still works: its slot was counted when it was issued.
      await reserve(api, userId, { admissionId: spare });
    });
  });

  describe('admission misuse (param admission_id, nothing charged)', () => {
    const expectRefused = async (userId: string, request: billing.ReserveRequest, fragment: string) => {
      const before = await balances(userId);
      const err = await errorOf(api.reserve(request));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'admission_id' });
      expect(err!.message).toContain(fragment);
      expect(await balances(userId)).toEqual(before);
    };

    it('refuses an admission used twice', async () => {
      const userId = newUser();
      const { admissionId } = await api.admitAiRequest({ userId, operation: TRANSCRIBE });
      await reserve(api, userId, { admissionId });
      await expectRefused(userId, reserveRequest(userId, { admissionId }), 'already used');
    });

    it('refuses an admission five minutes after it was issued', async () => {
      const userId = newUser();
      const { admissionId } = await api.admitAiRequest({ userId, operation: TRANSCRIBE });
      clock.advance(5 * 60_000);
      await expectRefused(userId, reserveRequest(userId, { admissionId }), 'expired');
      clock.advance(-1);
      await reserve(api, userId, { admissionId });
    });

    it('refuses another user\'s admission as unknown', async () => {
      const [owner, thief] = [newUser(), newUser()];
      const { admissionId } = await api.admitAiRequest({ userId: owner, operation: TRANSCRIBE });
      await expectRefused(thief, reserveRequest(thief, { admissionId }), 'unknown');
      await expectRefused(owner, reserveRequest(owner, { admissionId: newId('adm') }), 'unknown');
      await reserve(api, owner, { admissionId });
    });

    it('refuses an admission for another operation', async () => {
      const userId = newUser();
      const { admissionId } = await api.admitAiRequest({ userId, operation: CONVERT });
      await expectRefused(userId, reserveRequest(userId, { operation: TRANSCRIBE, admissionId }), 'issued for convert');
    });

    it('leaves an admission unused when the reserve is refused for credits', async () => {
      const userId = newUser();
      const { admissionId } = await api.admitAiRequest({ userId, operation: TRANSCRIBE });
      expect(await errorOf(api.reserve(reserveRequest(userId, { admissionId, credits: 101 })))).toMatchObject({ code: 'insufficient_tokens' });
      expect(await reserve(api, userId, { admissionId, credits: 100 })).toMatchObject({ credits: 100 });
    });
  });

  describe('store constraints on reservations', () => {
    it.each([
      ['a charge above the hold', 'credits = held_credits + 1, monthly_credits = held_credits + 1', 'reservations_charge_within_hold'],
      ['a split that does not add up', 'monthly_credits = monthly_credits + 1', 'reservations_split_adds_up'],
      ['a settled hold without a settle time', "state = 'committed'", 'reservations_settled_iff_not_held'],
    ])('the database refuses %s', async (_name, set, constraint) => {
      const r = await reserve(api, newUser(), { credits: 3 });
      await expect(db.query(`UPDATE reservations SET ${set} WHERE id = $1`, [r.id])).rejects.toMatchObject({ code: '23514', constraint });
    });
  });

  describeIfReal(realRedisUnavailable(), 'two billing instances sharing one Redis (REDIS_URL or a redis-server of our own)', () => {
    const prefix = `murmur-test:billing-charging:${randomBytes(6).toString('hex')}:`;
    let server: RealServer;
    let redis: Redis;
    let instances: RunningBillingService[] = [];
    let clients: BillingClient[] = [];

    beforeAll(async () => {
      server = await realRedis();
      redis = await connectRedis(server.url);
      instances = await Promise.all(
        [0, 1].map(() =>
          startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', clock, rateLimiter: new RedisRateLimiter(redis, { clock, keyPrefix: prefix }), sweepIntervalMs: 0 }),
        ),
      );
      clients = instances.map((i) => createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${i.port}`, { deadlineMs: 30_000 }));
    });

    afterAll(async () => {
      for (const c of clients) c.close();
      await Promise.all(instances.map((i) => i.stop()));
      for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) if (keys.length) await redis.del(keys);
      await redis.close();
      await server?.release();
    });

    it('admits exactly 10 of 25 concurrent calls spread over both', async () => {
      const userId = newUser();
      await usage(userId);
      const results = await Promise.allSettled(
        Array.from({ length: 25 }, (_, i) => clients[i % 2]!.admitAiRequest({ userId, operation: i % 3 ? TRANSCRIBE : CONVERT })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as MurmurError] : []));
      expect(refused.map((e) => e.code)).toEqual(Array(15).fill('rate_limit_exceeded'));
      expect(refused.every((e) => Number(e.meta.retry_after) >= 1)).toBe(true);
    });
  });
});
