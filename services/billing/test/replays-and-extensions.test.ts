/**
 * Money that cannot be gamed, at billing's own door (issue #30): an idempotency key replays only
 * the request it was made for (same operation, same fingerprint), and a transcription's hold
 * grows with its decoded audio and is charged by it (ExtendReservation, Commit by audio_seconds).
 */
import { type MurmurError } from '@murmur/contract';
import { createLogger, type Database, newId, type PromiseClient } from '@murmur/kit';
import { createPolicyClient, ManualClock, testAccess } from '@murmur/kit/testing';
import { billing } from '@murmur/proto';
import { MemoryRateLimiter, startBillingService, type RunningBillingService } from '../src/index';
import { openBillingDatabase } from './support/database';

const { OPERATION_TRANSCRIBE: TRANSCRIBE, OPERATION_CONVERT: CONVERT } = billing.Operation;
const State = billing.ReservationState;
const log = createLogger('billing-replays-test', 'silent');

describe('idempotency keys replay only their own request; holds grow with decoded audio', () => {
  const clock = new ManualClock('2026-03-10T12:00:00Z');
  let db: Database;
  let service: RunningBillingService;
  let api: PromiseClient<billing.BillingServiceClient>;

  beforeAll(async () => {
    db = await openBillingDatabase(4);
    service = await startBillingService({ access: testAccess('billing'), db, log, address: '127.0.0.1:0', clock, rateLimiter: new MemoryRateLimiter(clock), sweepIntervalMs: 0 });
    api = createPolicyClient(billing.BillingServiceClient, `127.0.0.1:${service.port}`, { deadlineMs: 30_000 });
  });
  afterAll(async () => {
    api?.close();
    await service?.stop();
    await db?.close();
  });

  const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as MurmurError);
  const request = (userId: string, over: Partial<billing.ReserveRequest> = {}): billing.ReserveRequest => ({
    userId,
    operation: TRANSCRIBE,
    credits: 0,
    idempotencyKey: newId('key'),
    admissionId: '',
    audioSeconds: 60,
    transcriptChars: 0,
    holdSeconds: 0,
    requestFingerprint: 'sha256:aaaa',
    ...over,
  });
  const usage = async (userId: string) => {
    const u = (await api.getUsage({ userId })).usage!;
    return { monthly: u.monthlyCreditsRemaining, prepaid: u.prepaidCreditsRemaining, spend: u.spendCents, reserved: u.creditsReserved, used: u.creditsUsed };
  };
  const window = async (userId: string) => (await api.getRateLimit({ userId })).rateLimit!.remaining;
  const ledgerCount = async (userId: string) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM ledger_entries WHERE user_id = $1', [userId]))[0]!.n);
  const newUser = async (monthly: number, prepaid = 0, capCents = 0) => {
    const userId = newId('usr');
    await api.adjustCredits({ userId, monthlyCredits: monthly, prepaidCredits: prepaid, note: 'test setup' });
    await api.setSpendingCap({ userId, capCents });
    return userId;
  };

  describe('Reserve with a key that exists', () => {
    it('replays the same request: the same reservation, replayed, nothing more held, no rate-limit slot', async () => {
      const userId = await newUser(50);
      const first = await api.reserve(request(userId, { idempotencyKey: 'k-same' }));
      expect(first.replayed).toBe(false);
      const before = { usage: await usage(userId), slots: await window(userId) };
      const again = await api.reserve(request(userId, { idempotencyKey: 'k-same' }));
      expect(again).toMatchObject({ replayed: true, reservation: { id: first.reservation!.id, state: State.RESERVATION_STATE_HELD } });
      expect(again.rateLimit).toBeUndefined();
      expect({ usage: await usage(userId), slots: await window(userId) }).toEqual(before);
    });

    it.each([
      ['another fingerprint (other audio or options)', { requestFingerprint: 'sha256:bbbb' }],
      ['another operation (a transcription key used for a conversion)', { operation: CONVERT, transcriptChars: 150_000, audioSeconds: 0 }],
      ["a job's key (its own fingerprint) sent as a transcription's", { requestFingerprint: 'sha256:cccc' }],
    ])('refuses %s with idempotency_conflict, before pricing, holding or a rate-limit slot', async (_name, over) => {
      const userId = await newUser(50);
      const made = (await api.reserve(request(userId, { idempotencyKey: 'k-reused', audioSeconds: 600 }))).reservation!;
      await api.commit({ userId, reservationId: made.id, credits: 0, usageSeconds: 600, audioSeconds: 600 });
      const before = { usage: await usage(userId), slots: await window(userId), ledger: await ledgerCount(userId) };
      // A 150,000-character conversion or a two-hour transcription: either would cost.
      const err = await errorOf(api.reserve(request(userId, { idempotencyKey: 'k-reused', audioSeconds: 7_200, ...over })));
      expect(err).toMatchObject({ code: 'idempotency_conflict', param: 'idempotency_key' });
      expect({ usage: await usage(userId), slots: await window(userId), ledger: await ledgerCount(userId) }).toEqual(before);
    });

    it('frees the key of a reservation that charged nothing (released, expired): a retry, even of a cut-short upload, reserves anew and pays', async () => {
      const userId = await newUser(50);
      const made = (await api.reserve(request(userId, { idempotencyKey: 'k-failed', requestFingerprint: 'sha256:half-upload' }))).reservation!;
      await api.release({ userId, reservationId: made.id, reason: 'cancelled' });
      const retry = await api.reserve(request(userId, { idempotencyKey: 'k-failed' }));
      expect(retry).toMatchObject({ replayed: false, reservation: { state: State.RESERVATION_STATE_HELD, credits: 1 } });
      expect(retry.reservation!.id).not.toBe(made.id);
      expect(await usage(userId)).toMatchObject({ monthly: 49, reserved: 1 });
      // Once it holds the key, the key is bound to the retry's request again.
      expect(await errorOf(api.reserve(request(userId, { idempotencyKey: 'k-failed', requestFingerprint: 'sha256:half-upload' })))).toMatchObject({
        code: 'idempotency_conflict',
      });
      // An expired hold frees its key the same way.
      const lapsing = (await api.reserve(request(userId, { idempotencyKey: 'k-lapsed', holdSeconds: 30 }))).reservation!;
      clock.advance(31_000);
      expect((await api.reserve(request(userId, { idempotencyKey: 'k-lapsed' }))).reservation).toMatchObject({ state: State.RESERVATION_STATE_HELD });
      expect((await api.renewReservation({ userId, reservationId: lapsing.id, holdSeconds: 30 })).reservation).toMatchObject({ state: State.RESERVATION_STATE_EXPIRED });
    });

    it("checks a conversion against the plan's size cap before looking the key up", async () => {
      const userId = await newUser(500);
      const key = 'k-convert';
      await api.reserve(request(userId, { idempotencyKey: key, operation: CONVERT, audioSeconds: 0, transcriptChars: 1_000 }));
      expect(await errorOf(api.reserve(request(userId, { idempotencyKey: key, operation: CONVERT, audioSeconds: 0, transcriptChars: 300_000 })))).toMatchObject({
        code: 'invalid_request',
        param: 'transcript',
      });
    });

    it('requires a request fingerprint', async () => {
      const userId = await newUser(5);
      for (const requestFingerprint of ['', 'x'.repeat(129), 'with space']) {
        expect(await errorOf(api.reserve(request(userId, { requestFingerprint })))).toMatchObject({ code: 'invalid_request', param: 'request_fingerprint' });
      }
      expect((await usage(userId)).reserved).toBe(0);
    });
  });

  describe('ExtendReservation', () => {
    it('reports what a transcription hold pays for, and grows it up to the wanted length while the balance allows', async () => {
      const userId = await newUser(10);
      const held = (await api.reserve(request(userId))).reservation!;
      expect(held).toMatchObject({ credits: 1, audioSecondsCovered: 60 });
      const grown = (await api.extendReservation({ userId, reservationId: held.id, audioSeconds: 61, maxAudioSeconds: 240 })).reservation!;
      expect(grown).toMatchObject({ id: held.id, credits: 4, monthlyCredits: 4, audioSecondsCovered: 240, state: State.RESERVATION_STATE_HELD });
      expect(await usage(userId)).toMatchObject({ monthly: 6, reserved: 4 });
      // Already covered: unchanged, nothing drawn.
      expect((await api.extendReservation({ userId, reservationId: held.id, audioSeconds: 200, maxAudioSeconds: 0 })).reservation).toMatchObject({ credits: 4 });
      // Wants 100 minutes, can pay for 6 more: holds what the balance allows, never less than needed now.
      expect((await api.extendReservation({ userId, reservationId: held.id, audioSeconds: 250, maxAudioSeconds: 6_000 })).reservation).toMatchObject({
        credits: 10,
        audioSecondsCovered: 600,
      });
      expect(await usage(userId)).toMatchObject({ monthly: 0, reserved: 10 });
    });

    it('draws prepaid credits under the cap like a reserve, and refuses with nothing changed when not even the needed minute is payable', async () => {
      const userId = await newUser(1, 3, 2); // 1 monthly, 3 prepaid at 1 cent, a cap of 2 cents
      const held = (await api.reserve(request(userId))).reservation!;
      const grown = (await api.extendReservation({ userId, reservationId: held.id, audioSeconds: 61, maxAudioSeconds: 600 })).reservation!;
      expect(grown).toMatchObject({ credits: 3, monthlyCredits: 1, prepaidCredits: 2 });
      const before = { usage: await usage(userId), ledger: await ledgerCount(userId) };
      expect(before.usage).toMatchObject({ monthly: 0, prepaid: 1, spend: 2, reserved: 3 });
      const err = await errorOf(api.extendReservation({ userId, reservationId: held.id, audioSeconds: 181, maxAudioSeconds: 0 }));
      expect(err).toMatchObject({ code: 'spending_cap_reached' });
      expect({ usage: await usage(userId), ledger: await ledgerCount(userId) }).toEqual(before);
      await api.setSpendingCap({ userId, capCents: 100 });
      await api.adjustCredits({ userId, prepaidCredits: 0, note: 'empty' });
      expect(await errorOf(api.extendReservation({ userId, reservationId: held.id, audioSeconds: 181, maxAudioSeconds: 0 }))).toMatchObject({ code: 'insufficient_tokens' });
    });

    it('refuses holds not priced by audio, and answers a hold that is no longer held unchanged', async () => {
      const userId = await newUser(50);
      const conversion = (await api.reserve(request(userId, { operation: CONVERT, audioSeconds: 0, transcriptChars: 10 }))).reservation!;
      const explicit = (await api.reserve(request(userId, { credits: 3 }))).reservation!;
      for (const r of [conversion, explicit]) {
        expect(await errorOf(api.extendReservation({ userId, reservationId: r.id, audioSeconds: 600, maxAudioSeconds: 0 }))).toMatchObject({
          code: 'invalid_request',
          param: 'reservation_id',
        });
      }
      const released = (await api.reserve(request(userId))).reservation!;
      await api.release({ userId, reservationId: released.id, reason: 'test' });
      expect((await api.extendReservation({ userId, reservationId: released.id, audioSeconds: 600, maxAudioSeconds: 0 })).reservation).toMatchObject({
        state: State.RESERVATION_STATE_RELEASED,
        credits: 1,
      });
      expect(await errorOf(api.extendReservation({ userId: await newUser(1), reservationId: released.id, audioSeconds: 600, maxAudioSeconds: 0 }))).toMatchObject({
        code: 'not_found',
      });
    });
  });

  describe('Commit by audio_seconds', () => {
    it('charges the decoded length at the rate the hold was made at and returns the rest', async () => {
      const userId = await newUser(20);
      const held = (await api.reserve(request(userId, { audioSeconds: 600 }))).reservation!;
      const committed = (await api.commit({ userId, reservationId: held.id, credits: 0, usageSeconds: 121, audioSeconds: 120.4 })).reservation!;
      expect(committed).toMatchObject({ state: State.RESERVATION_STATE_COMMITTED, credits: 3 });
      expect(await usage(userId)).toMatchObject({ monthly: 17, reserved: 0, used: 3 });
    });

    it('refuses more audio than the hold pays for, and credits together with audio_seconds', async () => {
      const userId = await newUser(20);
      const held = (await api.reserve(request(userId, { audioSeconds: 60 }))).reservation!;
      expect(await errorOf(api.commit({ userId, reservationId: held.id, credits: 0, usageSeconds: 120, audioSeconds: 119.7 }))).toMatchObject({
        code: 'invalid_request',
        param: 'audio_seconds',
      });
      expect(await errorOf(api.commit({ userId, reservationId: held.id, credits: 1, usageSeconds: 60, audioSeconds: 60 }))).toMatchObject({ code: 'invalid_request' });
      const conversion = (await api.reserve(request(userId, { operation: CONVERT, audioSeconds: 0, transcriptChars: 10 }))).reservation!;
      expect(await errorOf(api.commit({ userId, reservationId: conversion.id, credits: 0, usageSeconds: 0, audioSeconds: 30 }))).toMatchObject({
        code: 'invalid_request',
        param: 'audio_seconds',
      });
      expect((await api.getUsage({ userId })).usage).toMatchObject({ creditsReserved: 2 });
    });
  });
});
