import { MurmurError } from '@murmur/contract';
import { createClient, createLogger, newId, type Database, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, ManualClock, testAccess } from '@murmur/kit/testing';
import { billing } from '@murmur/proto';
import { MemoryRateLimiter, PLANS, startBillingService } from '../src/index';
import { PostgresBillingStore } from '../src/postgres-store';
import type { AccountChanges, NewAccount } from '../src/store';
import { describeRaces, openBillingDatabase } from './support/database';

describe('billing service over gRPC (real Postgres: DATABASE_URL or a cluster of our own; PGlite only where neither exists)', () => {
  const clock = new ManualClock('2026-01-15T12:00:00Z');
  const limiter = new MemoryRateLimiter(clock);
  let db: Database;
  let server: { port: number; stop(): Promise<void> };
  let client: PromiseClient<billing.BillingServiceClient>;
  let store: PostgresBillingStore;

  beforeAll(async () => {
    db = await openBillingDatabase(8);
    store = new PostgresBillingStore(db);
    server = await startBillingService({
      access: testAccess('billing'),
      db,
      log: createLogger('billing-test', 'silent'),
      address: '127.0.0.1:0',
      clock,
      rateLimiter: limiter,
      cursorSecret: 'billing-test-cursor-secret',
    });
    client = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${server.port}`, { deadlineMs: 20_000 });
  });

  afterAll(async () => {
    client?.close();
    await server?.stop();
    await db?.close();
  });

  beforeEach(() => clock.set('2026-01-15T12:00:00Z'));

  const newUser = () => newId('usr');
  const usage = async (userId: string) => (await client.getUsage({ userId })).usage!;
  const ledger = async (userId: string, pageSize = 100) => (await client.listLedgerEntries({ userId, pageSize, pageToken: '' })).entries;
  const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as MurmurError);
  /** Writes what the charging path will write, straight through the store, on an account the service opened. */
  const setAccount = async (userId: string, changes: AccountChanges) => {
    await usage(userId);
    await store.withAccount(userId, openingAccount(userId), (_a, tx) => tx.update(changes, clock.now()));
  };
  const openingAccount = (userId: string): NewAccount => ({
    userId, planId: 'free', monthlyRemaining: 100, prepaidRemaining: 0, reserved: 0,
    periodStart: new Date('2026-01-01T00:00:00Z'), periodEnd: new Date('2026-02-01T00:00:00Z'),
    spendingCapCents: 0, spendCents: 0, creditsUsed: 0, transcriptions: 0, transcriptionSeconds: 0, conversions: 0, createdAt: clock.now(),
  });

  describe('ListPlans', () => {
    it('returns free, pro and business from the one plan config, every field set', async () => {
      const { plans } = await client.listPlans({});
      expect(plans).toEqual(PLANS);
      expect(plans.map((p) => [p.id, p.monthlyCredits, p.defaultSpendingCapCents, p.maxTranscriptChars])).toEqual([
        ['free', 100, 0, 200_000],
        ['pro', 2_000, 5_000, 1_000_000],
        ['business', 10_000, 50_000, 2_000_000],
      ]);
      for (const plan of plans) {
        expect(plan).toMatchObject({
          rateLimitPerMinute: 10,
          maxAudioBytes: 500_000_000,
          prepaidCreditPriceCents: 1,
          transcriptionCreditsPerMinute: 1,
          conversionCreditsPer1kChars: 1,
        });
      }
    });
  });

  describe('GetUsage', () => {
    it('opens a free account with the full allowance on first use', async () => {
      const userId = newUser();
      expect(await usage(userId)).toEqual({
        userId,
        plan: PLANS[0],
        monthlyCreditsRemaining: 100,
        prepaidCreditsRemaining: 0,
        periodStart: new Date('2026-01-01T00:00:00Z'),
        periodEnd: new Date('2026-02-01T00:00:00Z'),
        spendingCapCents: 0,
        spendCents: 0,
        rateLimit: { limit: 10, remaining: 10, windowSeconds: 60, resetSeconds: 0 },
        creditsUsed: 0,
        transcriptions: 0,
        transcriptionSeconds: 0,
        conversions: 0,
        creditsReserved: 0,
      });
      const rows = await ledger(userId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ kind: 'reset', monthlyDelta: 100, prepaidDelta: 0, spendDeltaCents: 0 });
    });

    describeRaces('first calls racing', () => {
      it('creates exactly one account', async () => {
        const userId = newUser();
        const all = await Promise.all(Array.from({ length: 8 }, () => usage(userId)));
        expect(new Set(all.map((u) => u.monthlyCreditsRemaining))).toEqual(new Set([100]));
        expect(await ledger(userId)).toHaveLength(1);
      });
    });

    it('reports this period\'s counters, spend and reservations as stored', async () => {
      const userId = newUser();
      await setAccount(userId, { monthlyRemaining: 12, reserved: 5, spendCents: 250, creditsUsed: 83, transcriptions: 4, transcriptionSeconds: 1_800, conversions: 3 });
      expect(await usage(userId)).toMatchObject({
        monthlyCreditsRemaining: 12,
        creditsReserved: 5,
        spendCents: 250,
        creditsUsed: 83,
        transcriptions: 4,
        transcriptionSeconds: 1_800,
        conversions: 3,
      });
    });

    it('reports the rate-limit window without taking a slot', async () => {
      const userId = newUser();
      for (let i = 0; i < 3; i++) await limiter.hit(userId, 10, 60);
      expect((await usage(userId)).rateLimit).toEqual({ limit: 10, remaining: 7, windowSeconds: 60, resetSeconds: 60 });
      expect((await client.getRateLimit({ userId })).rateLimit).toEqual({ limit: 10, remaining: 7, windowSeconds: 60, resetSeconds: 60 });
      for (let i = 0; i < 7; i++) await limiter.hit(userId, 10, 60);
      clock.advance(15_000);
      expect((await client.getRateLimit({ userId })).rateLimit).toEqual({ limit: 10, remaining: 0, windowSeconds: 60, resetSeconds: 45 });
      clock.advance(45_000);
      expect((await client.getRateLimit({ userId })).rateLimit).toEqual({ limit: 10, remaining: 10, windowSeconds: 60, resetSeconds: 0 });
    });
  });

  describe('monthly reset', () => {
    it('after idle months resets once: full allowance, no rollover, spend and counters zeroed, prepaid kept', async () => {
      const userId = newUser();
      await client.grantPrepaidCredits({ userId, credits: 500, note: 'purchase' });
      await setAccount(userId, { monthlyRemaining: 40, spendCents: 300, creditsUsed: 60, transcriptions: 2, transcriptionSeconds: 600, conversions: 1 });
      const before = await ledger(userId);

      clock.set('2026-04-10T08:00:00Z'); // February and March pass unused
      const after = await usage(userId);
      expect(after).toMatchObject({
        monthlyCreditsRemaining: 100,
        prepaidCreditsRemaining: 500,
        spendCents: 0,
        creditsUsed: 0,
        transcriptions: 0,
        transcriptionSeconds: 0,
        conversions: 0,
        periodStart: new Date('2026-04-01T00:00:00Z'),
        periodEnd: new Date('2026-05-01T00:00:00Z'),
      });
      await usage(userId);
      await client.getRateLimit({ userId });

      const rows = await ledger(userId);
      const added = rows.slice(0, rows.length - before.length);
      expect(added).toHaveLength(1);
      expect(added[0]).toMatchObject({ kind: 'reset', monthlyDelta: 60, prepaidDelta: 0, spendDeltaCents: -300, createdAt: new Date('2026-04-10T08:00:00Z') });
      expect(added[0]!.note).toContain('2026-04');
    });

    it('keeps the ledger reconciled with the balances across resets, grants and adjustments', async () => {
      const userId = newUser();
      await client.grantPrepaidCredits({ userId, credits: 70, note: '' });
      await client.adjustCredits({ userId, monthlyCredits: 3, note: 'support' });
      clock.set('2026-03-02T00:00:00Z');
      await client.adjustCredits({ userId, prepaidCredits: 20, note: 'support' });
      const u = await usage(userId);
      const rows = await ledger(userId);
      expect(rows.reduce((s, r) => s + r.monthlyDelta, 0)).toBe(u.monthlyCreditsRemaining);
      expect(rows.reduce((s, r) => s + r.prepaidDelta, 0)).toBe(u.prepaidCreditsRemaining);
      expect(u).toMatchObject({ monthlyCreditsRemaining: 100, prepaidCreditsRemaining: 20 });
    });

    it('turns exactly at the first instant of the next month, UTC', async () => {
      const userId = newUser();
      await setAccount(userId, { monthlyRemaining: 1 });
      clock.set('2026-01-31T23:59:59.999Z');
      expect((await usage(userId)).monthlyCreditsRemaining).toBe(1);
      clock.set('2026-02-01T00:00:00.000Z');
      expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 100, periodEnd: new Date('2026-03-01T00:00:00Z') });
    });

    it('resets before a write too, in the same transaction, so the write lands in the new period', async () => {
      const userId = newUser();
      await setAccount(userId, { monthlyRemaining: 0, spendCents: 10 });
      clock.set('2026-02-03T00:00:00Z');
      const u = (await client.grantPrepaidCredits({ userId, credits: 5, note: '' })).usage!;
      expect(u).toMatchObject({ monthlyCreditsRemaining: 100, prepaidCreditsRemaining: 5, spendCents: 0, periodStart: new Date('2026-02-01T00:00:00Z') });
      expect((await ledger(userId)).map((r) => r.kind)).toEqual(['grant', 'reset', 'reset']);
    });

    describeRaces('calls of a new month racing', () => {
      it('resets only once', async () => {
        const userId = newUser();
        await usage(userId);
        clock.set('2026-02-10T00:00:00Z');
        await Promise.all(Array.from({ length: 6 }, () => usage(userId)));
        expect((await ledger(userId)).filter((r) => r.kind === 'reset')).toHaveLength(2); // opening + February
      });
    });
  });

  describe('ChangePlan', () => {
    it('moves to the new plan now and applies its allowance from the next reset', async () => {
      const userId = newUser();
      await usage(userId);
      const changed = (await client.changePlan({ userId, planId: 'pro' })).usage!;
      expect(changed.plan?.id).toBe('pro');
      expect(changed.monthlyCreditsRemaining).toBe(100);
      expect(changed.spendingCapCents).toBe(5_000); // was still the free default, so it follows the plan
      const [row] = await ledger(userId);
      expect(row).toMatchObject({ kind: 'adjust', monthlyDelta: 0, prepaidDelta: 0 });
      expect(row!.note).toContain('free to pro');

      clock.set('2026-02-01T00:00:00Z');
      expect((await usage(userId)).monthlyCreditsRemaining).toBe(2_000);
    });

    it('opens a new account directly on the plan with its full allowance', async () => {
      const userId = newUser();
      const opened = (await client.changePlan({ userId, planId: 'business' })).usage!;
      expect(opened).toMatchObject({ plan: { id: 'business' }, monthlyCreditsRemaining: 10_000, spendingCapCents: 50_000 });
      const rows = await ledger(userId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ kind: 'reset', monthlyDelta: 10_000 });
    });

    it('keeps a spending cap the user chose', async () => {
      const userId = newUser();
      await client.setSpendingCap({ userId, capCents: 1_234 });
      expect((await client.changePlan({ userId, planId: 'business' })).usage).toMatchObject({ spendingCapCents: 1_234, plan: { id: 'business' } });
    });

    it('does nothing when the user is already on the plan', async () => {
      const userId = newUser();
      await client.changePlan({ userId, planId: 'free' });
      expect(await ledger(userId)).toHaveLength(1);
    });

    it.each(['', 'enterprise', 'PRO'])('rejects the unknown plan %j with param plan_id', async (planId) => {
      const err = await errorOf(client.changePlan({ userId: newUser(), planId }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'plan_id' });
    });
  });

  describe('GrantPrepaidCredits', () => {
    it('adds prepaid credits and writes one grant row', async () => {
      const userId = newUser();
      const u = (await client.grantPrepaidCredits({ userId, credits: 10_000_000, note: 'order 42' })).usage!;
      expect(u).toMatchObject({ prepaidCreditsRemaining: 10_000_000, monthlyCreditsRemaining: 100, spendCents: 0 });
      const [row] = await ledger(userId);
      expect(row).toMatchObject({ kind: 'grant', prepaidDelta: 10_000_000, monthlyDelta: 0, spendDeltaCents: 0, note: 'order 42', reservationId: '' });
      expect(row!.id).toMatch(/^led_/);
    });

    it.each([0, -5, 10_000_001])('rejects %i credits with param credits and grants nothing', async (credits) => {
      const userId = newUser();
      const err = await errorOf(client.grantPrepaidCredits({ userId, credits, note: '' }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'credits' });
      expect((await usage(userId)).prepaidCreditsRemaining).toBe(0);
    });

    it('rejects a note longer than 500 characters', async () => {
      const err = await errorOf(client.grantPrepaidCredits({ userId: newUser(), credits: 1, note: 'x'.repeat(501) }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'note' });
    });
  });

  describe('SetSpendingCap', () => {
    it.each([0, 2_500])('sets the cap to %i cents', async (capCents) => {
      const userId = newUser();
      await client.setSpendingCap({ userId, capCents: 77 });
      expect((await client.setSpendingCap({ userId, capCents })).usage?.spendingCapCents).toBe(capCents);
      expect((await usage(userId)).spendingCapCents).toBe(capCents);
    });

    it('rejects a negative cap with param cap_cents', async () => {
      const err = await errorOf(client.setSpendingCap({ userId: newUser(), capCents: -1 }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'cap_cents' });
    });
  });

  describe('AdjustCredits', () => {
    it('sets both balances and records the deltas on one adjust row', async () => {
      const userId = newUser();
      await client.grantPrepaidCredits({ userId, credits: 10, note: '' });
      const u = (await client.adjustCredits({ userId, monthlyCredits: 7, prepaidCredits: 13, note: 'ticket 9' })).usage!;
      expect(u).toMatchObject({ monthlyCreditsRemaining: 7, prepaidCreditsRemaining: 13 });
      expect((await ledger(userId))[0]).toMatchObject({ kind: 'adjust', monthlyDelta: -93, prepaidDelta: 3, note: 'ticket 9' });
    });

    it('leaves an absent balance unchanged', async () => {
      const userId = newUser();
      await client.grantPrepaidCredits({ userId, credits: 10, note: '' });
      const u = (await client.adjustCredits({ userId, prepaidCredits: 0, note: '' })).usage!;
      expect(u).toMatchObject({ monthlyCreditsRemaining: 100, prepaidCreditsRemaining: 0 });
      expect((await ledger(userId))[0]).toMatchObject({ kind: 'adjust', monthlyDelta: 0, prepaidDelta: -10 });
    });

    it.each([
      [{ monthlyCredits: -1 }, 'monthly_credits'],
      [{ prepaidCredits: -1 }, 'prepaid_credits'],
      [{ monthlyCredits: 5, prepaidCredits: -3 }, 'prepaid_credits'],
      [{}, 'monthly_credits'],
    ])('rejects %j with param %s and changes nothing', async (balances, param) => {
      const userId = newUser();
      const err = await errorOf(client.adjustCredits({ userId, ...balances, note: '' }));
      expect(err).toMatchObject({ code: 'invalid_request', param });
      expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 100, prepaidCreditsRemaining: 0 });
    });
  });

  describe('ListLedgerEntries', () => {
    it('pages newest first, 20 by default, without gaps or repeats among rows of one millisecond', async () => {
      const userId = newUser();
      for (let i = 1; i <= 25; i++) await client.grantPrepaidCredits({ userId, credits: i, note: `grant ${i}` });
      const first = await client.listLedgerEntries({ userId, pageSize: 0, pageToken: '' });
      expect(first.entries).toHaveLength(20);
      expect(first.nextPageToken).not.toBe('');
      const second = await client.listLedgerEntries({ userId, pageSize: 0, pageToken: first.nextPageToken });
      expect(second.nextPageToken).toBe('');
      const notes = [...first.entries, ...second.entries].map((e) => e.note);
      expect(notes).toEqual([...Array.from({ length: 25 }, (_, i) => `grant ${25 - i}`), expect.stringContaining('account opened')]);
    });

    it('orders by time across periods', async () => {
      const userId = newUser();
      await client.grantPrepaidCredits({ userId, credits: 1, note: 'january' });
      clock.set('2026-02-02T00:00:00Z');
      await client.grantPrepaidCredits({ userId, credits: 1, note: 'february' });
      const rows = await ledger(userId, 2);
      expect(rows.map((r) => r.note)).toEqual(['february', expect.stringContaining('2026-02')]);
      expect(rows.map((r) => r.createdAt)).toEqual([new Date('2026-02-02T00:00:00Z'), new Date('2026-02-02T00:00:00Z')]);
    });

    it('returns exactly page_size rows and no token when nothing follows', async () => {
      const userId = newUser();
      await client.grantPrepaidCredits({ userId, credits: 1, note: '' });
      const page = await client.listLedgerEntries({ userId, pageSize: 2, pageToken: '' });
      expect(page.entries).toHaveLength(2);
      expect(page.nextPageToken).toBe('');
    });

    it.each([-1, 101])('rejects page_size %i', async (pageSize) => {
      const err = await errorOf(client.listLedgerEntries({ userId: newUser(), pageSize, pageToken: '' }));
      expect(err).toMatchObject({ code: 'invalid_request', param: 'page_size' });
    });

    it('rejects a forged page token, and one issued for another user', async () => {
      const owner = newUser();
      for (let i = 0; i < 3; i++) await client.grantPrepaidCredits({ userId: owner, credits: 1, note: '' });
      const { nextPageToken } = await client.listLedgerEntries({ userId: owner, pageSize: 1, pageToken: '' });
      expect(nextPageToken).not.toBe('');
      const forged = await errorOf(client.listLedgerEntries({ userId: owner, pageSize: 1, pageToken: `${nextPageToken}x` }));
      expect(forged).toMatchObject({ code: 'invalid_request', param: 'page_token' });
      const stolen = await errorOf(client.listLedgerEntries({ userId: newUser(), pageSize: 1, pageToken: nextPageToken }));
      expect(stolen).toMatchObject({ code: 'invalid_request', param: 'page_token' });
    });
  });

  describe('user ids', () => {
    const calls: Array<[string, (userId: string) => Promise<unknown>]> = [
      ['GetUsage', (userId) => client.getUsage({ userId })],
      ['ChangePlan', (userId) => client.changePlan({ userId, planId: 'pro' })],
      ['GrantPrepaidCredits', (userId) => client.grantPrepaidCredits({ userId, credits: 1, note: '' })],
      ['SetSpendingCap', (userId) => client.setSpendingCap({ userId, capCents: 0 })],
      ['AdjustCredits', (userId) => client.adjustCredits({ userId, monthlyCredits: 1, note: '' })],
      ['GetRateLimit', (userId) => client.getRateLimit({ userId })],
      ['ListLedgerEntries', (userId) => client.listLedgerEntries({ userId, pageSize: 0, pageToken: '' })],
      ['AdmitAiRequest', (userId) => client.admitAiRequest({ userId, operation: billing.Operation.OPERATION_CONVERT })],
      [
        'Reserve',
        (userId) =>
          client.reserve({ userId, operation: billing.Operation.OPERATION_CONVERT, credits: 1, idempotencyKey: 'k', admissionId: '', audioSeconds: 0, transcriptChars: 0, holdSeconds: 0, requestFingerprint: 'fp' }),
      ],
      ['Commit', (userId) => client.commit({ userId, reservationId: newId('rsv'), credits: 0, usageSeconds: 0, audioSeconds: 0 })],
      ['Release', (userId) => client.release({ userId, reservationId: newId('rsv'), reason: '' })],
    ];
    it.each(calls)('%s rejects anything but a usr_ id with param user_id', async (name, call) => {
      // AdmitAiRequest is a developer's own call: an empty user_id there means the caller (kit
      // access/ fills it in), so only the malformed ids reach the handler's check.
      const empty = name === 'AdmitAiRequest' ? [] : [''];
      for (const userId of [...empty, 'usr_', 'key_0123456789abcdef', 'usr_NOT-AN-ID', `usr_${'a'.repeat(70)}`]) {
        expect(await errorOf(call(userId))).toMatchObject({ code: 'invalid_request', param: 'user_id' });
      }
    });
  });

  describe('store constraints', () => {
    it.each<[string, AccountChanges]>([
      ['monthly balance', { monthlyRemaining: -1 }],
      ['prepaid balance', { prepaidRemaining: -1 }],
      ['reserved credits', { reserved: -1 }],
      ['spend', { spendCents: -1 }],
      ['spending cap', { spendingCapCents: -1 }],
      ['credits used', { creditsUsed: -1 }],
      ['transcription seconds', { transcriptionSeconds: -1 }],
    ])('the database itself refuses a negative %s, and the transaction leaves nothing behind', async (_name, changes) => {
      const userId = newUser();
      await usage(userId);
      const err = await store
        .withAccount(userId, openingAccount(userId), async (_a, tx) => {
          await tx.appendLedger({ kind: 'adjust', monthlyDelta: -101, createdAt: clock.now() });
          return tx.update(changes, clock.now());
        })
        .catch((e: unknown) => e as { code?: string; constraint?: string });
      expect(err).toMatchObject({ code: '23514', constraint: expect.stringMatching(/^accounts_.*_nonnegative$/) });
      expect(await ledger(userId)).toHaveLength(1);
      expect(await usage(userId)).toMatchObject({ monthlyCreditsRemaining: 100, prepaidCreditsRemaining: 0, spendCents: 0 });
    });
  });
});
