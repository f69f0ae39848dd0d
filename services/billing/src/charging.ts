/**
 * Charging an AI call: admission (AdmitAiRequest), reserve → commit / release, the lease of a
 * hold (renew) and the sweep that returns forgotten holds. Throws MurmurError only; knows no
 * gRPC and no SQL.
 */
import { checkIdempotencyKey, isId, MurmurError } from '@murmur/contract';
import { type Clock, type Logger, newId } from '@murmur/kit';
import type { billing } from '@murmur/proto';
import { checkNote, checkUserId } from './checks';
import { expireHolds, holdOf, returnHold, takeHold } from './holds';
import { type AccountLifecycle, planOf } from './lifecycle';
import {
  ADMISSION_TTL_SECONDS,
  admissionRefusal,
  affordableCredits,
  audioSecondsCovered,
  type Balance,
  conversionCredits,
  DEFAULT_HOLD_SECONDS,
  drawCredits,
  MAX_HOLD_SECONDS,
  MAX_FINGERPRINT_LENGTH,
  MAX_RESERVE_CREDITS,
  RATE_LIMIT_WINDOW_SECONDS,
  settleHold,
  transcriptionCredits,
} from './limits';
import { badAdmission, keyReused, lapsedNote, notHeldError, plural, rateLimitError, refusalError, reservationNotFound, transcriptTooLong } from './messages';
import type { RateLimiter, RateLimitState } from './rate-limiter';
import type { Account, AccountTransaction, BillingStore, OperationName, ReservationRecord } from './store';
import { countCredits, type CreditMovement } from './credit-metrics';

/** Accounts one sweep step fetches at a time. */
export const SWEEP_BATCH_SIZE = 100;
/** How long a used or expired admission is kept before the sweeper deletes it. */
export const ADMISSION_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What charging needs besides the account lifecycle. */
export interface ChargingDeps {
  store: BillingStore;
  lifecycle: AccountLifecycle;
  limiter: RateLimiter;
  clock: Clock;
  /** Where a failing rate limiter is reported (its callers see service_unavailable). */
  log?: Logger;
}

/** The fields of a ReserveRequest. */
export interface ReserveInput {
  userId: string;
  /** undefined: the request named no operation billing charges for. */
  operation: OperationName | undefined;
  /** Explicit amount; 0 prices the operation's quantity by the plan. */
  credits: number;
  idempotencyKey: string;
  /** '' → Reserve takes a rate-limit slot itself. */
  admissionId: string;
  audioSeconds: number;
  transcriptChars: number;
  /** 0 → {@link DEFAULT_HOLD_SECONDS}. */
  holdSeconds: number;
  /** What the request looks like (ReserveRequest.request_fingerprint): a replay must match it. */
  requestFingerprint: string;
}

/** The fields of an ExtendReservationRequest. */
export interface ExtendInput {
  userId: string;
  reservationId: string;
  audioSeconds: number;
  /** Below audioSeconds (0): exactly audioSeconds. */
  maxAudioSeconds: number;
}

/** What Reserve answers: the reservation, and the rate-limit window when Reserve took the call's slot itself. */
export interface Reserved {
  reservation: ReservationRecord;
  rateLimit: RateLimitState | undefined;
  /** The reservation was made earlier by the same request: the caller must not run the operation again. */
  replayed: boolean;
}

/** What AdmitAiRequest answers. */
export interface Admission {
  rateLimit: RateLimitState;
  admissionId: string;
}

function checkOperation(operation: OperationName | undefined): OperationName {
  if (!operation) throw new MurmurError('invalid_request', 'operation must be OPERATION_TRANSCRIBE or OPERATION_CONVERT.', { param: 'operation' });
  return operation;
}

/** A request fingerprint: 1–128 printable ASCII characters (a digest, never the request itself). */
function checkFingerprint(fingerprint: string): void {
  if (fingerprint.length === 0 || fingerprint.length > MAX_FINGERPRINT_LENGTH || !/^[\x21-\x7e]+$/.test(fingerprint)) {
    throw new MurmurError('invalid_request', `request_fingerprint is required: 1 to ${MAX_FINGERPRINT_LENGTH} printable ASCII characters, a digest of the request.`, {
      param: 'request_fingerprint',
    });
  }
}

function checkAudioSeconds(seconds: number, param: string): void {
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new MurmurError('invalid_request', `${param} must be a finite number of seconds, 0 or more.`, { param });
  }
}

function checkHoldSeconds(holdSeconds: number): void {
  if (!Number.isInteger(holdSeconds) || holdSeconds < 0 || holdSeconds > MAX_HOLD_SECONDS) {
    throw new MurmurError('invalid_request', `hold_seconds must be from 1 to ${MAX_HOLD_SECONDS} (0 means ${DEFAULT_HOLD_SECONDS}).`, {
      param: 'hold_seconds',
    });
  }
}

function balanceOf(account: Account, plan: Readonly<billing.Plan>): Balance {
  return {
    monthly: account.monthlyRemaining,
    prepaid: account.prepaidRemaining,
    spendCents: account.spendCents,
    capCents: account.spendingCapCents,
    priceCents: plan.prepaidCreditPriceCents,
  };
}

/** See the module comment. One instance per process; stateless apart from its dependencies. */
export class Charging {
  private readonly store: BillingStore;
  private readonly lifecycle: AccountLifecycle;
  private readonly limiter: RateLimiter;
  private readonly clock: Clock;
  private readonly log: Logger | undefined;

  constructor(deps: ChargingDeps) {
    this.store = deps.store;
    this.lifecycle = deps.lifecycle;
    this.limiter = deps.limiter;
    this.clock = deps.clock;
    this.log = deps.log;
  }

  /**
   * The pre-body check of an AI call. Credits and cap first (read-only: a one-credit charge
   * must be possible now), then one rate-limit slot — so a user with nothing left burns no
   * slots. Charges nothing; the admission it returns lets Reserve skip a second slot.
   */
  async admitAiRequest(userId: string, operation: OperationName | undefined): Promise<Admission> {
    checkUserId(userId);
    const op = checkOperation(operation);
    const account = await this.lifecycle.current(userId);
    const plan = planOf(account);
    const refusal = admissionRefusal(balanceOf(account, plan));
    if (refusal) throw refusalError(refusal, account, plan, 1);
    const rateLimit = await this.hitRateLimit(userId, plan);
    const now = this.clock.now();
    const admissionId = newId('adm');
    await this.store.insertAdmission({
      id: admissionId,
      userId,
      operation: op,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ADMISSION_TTL_SECONDS * 1000),
      consumedAt: null,
      reservationId: null,
    });
    return { rateLimit, admissionId };
  }

  /**
   * Holds credits for one AI operation, atomically under the account lock: monthly first, then
   * prepaid, whose spend counts against the cap at once; all or nothing. The same
   * (user, idempotency key) returns the reservation already made, whatever its state. Without
   * an admission it takes a rate-limit slot itself (after the credit checks, like
   * AdmitAiRequest) and answers the window, so a direct internal call is limited the same way and
   * a caller that read a small body first needs no AdmitAiRequest round trip.
   */
  async reserve(input: ReserveInput): Promise<Reserved> {
    const { userId, idempotencyKey, admissionId, credits, audioSeconds, transcriptChars, holdSeconds, requestFingerprint } = input;
    checkUserId(userId);
    const op = checkOperation(input.operation);
    // Required: one key per AI call of this user (the gateway makes one when its caller sent none).
    checkIdempotencyKey(idempotencyKey, 'idempotency_key');
    if (!Number.isSafeInteger(credits) || credits < 0 || credits > MAX_RESERVE_CREDITS) {
      throw new MurmurError('invalid_request', `credits must be a whole number from 0 to ${MAX_RESERVE_CREDITS} (0 prices the quantity by the plan).`, {
        param: 'credits',
      });
    }
    checkAudioSeconds(audioSeconds, 'audio_seconds');
    checkFingerprint(requestFingerprint);
    if (!Number.isSafeInteger(transcriptChars) || transcriptChars < 0) {
      throw new MurmurError('invalid_request', 'transcript_chars must be a whole number, 0 or more.', { param: 'transcript_chars' });
    }
    checkHoldSeconds(holdSeconds);
    if (admissionId !== '' && !isId('adm', admissionId)) throw badAdmission('is not an admission id of the form adm_….');

    const result = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      const plan = planOf(account);
      if (op === 'convert' && plan.maxTranscriptChars > 0 && transcriptChars > plan.maxTranscriptChars) throw transcriptTooLong(transcriptChars, plan);
      // A key replays only the request it was made for: another operation or request is refused
      // before anything is priced, held or admitted, and a replay holds nothing new.
      const existing = await tx.findReservationByKey(idempotencyKey);
      if (existing) {
        if (existing.operation !== op || existing.requestFingerprint !== requestFingerprint) throw keyReused(existing, op);
        return { reservation: existing, rateLimit: undefined, replayed: true };
      }

      const unitCredits = credits > 0 ? 0 : op === 'transcribe' ? plan.transcriptionCreditsPerMinute : plan.conversionCreditsPer1kChars;
      const amount = credits > 0
        ? credits
        : op === 'transcribe'
          ? transcriptionCredits(audioSeconds, unitCredits)
          : conversionCredits(transcriptChars, unitCredits);
      if (amount > MAX_RESERVE_CREDITS) {
        const param = op === 'transcribe' ? 'audio_seconds' : 'transcript_chars';
        throw new MurmurError('invalid_request', `${param} prices at ${amount} credits, more than one reservation may hold (${MAX_RESERVE_CREDITS}).`, { param });
      }
      const id = newId('rsv');
      if (admissionId !== '') await this.consumeAdmission(tx, admissionId, op, id, now);
      const draw = drawCredits(balanceOf(account, plan), amount);
      if (typeof draw === 'string') throw refusalError(draw, account, plan, amount);
      const rateLimit = admissionId === '' ? await this.hitRateLimit(userId, plan) : undefined;

      const reservation = await tx.insertReservation({
        id,
        userId,
        operation: op,
        credits: amount,
        monthlyCredits: draw.monthly,
        prepaidCredits: draw.prepaid,
        heldCredits: amount,
        spendCents: draw.spendCents,
        prepaidCreditPriceCents: plan.prepaidCreditPriceCents,
        state: 'held',
        idempotencyKey,
        admissionId: admissionId === '' ? null : admissionId,
        periodStart: account.periodStart,
        usageSeconds: 0,
        note: '',
        createdAt: now,
        expiresAt: new Date(now.getTime() + (holdSeconds || DEFAULT_HOLD_SECONDS) * 1000),
        settledAt: null,
        requestFingerprint,
        unitCredits,
      });
      await takeHold(account, tx, draw, amount, { kind: 'reserve', reservationId: id, note: `${op}: ${plural(amount, 'credit')} held (${draw.monthly} monthly, ${draw.prepaid} prepaid)` }, now);
      return { reservation, rateLimit, replayed: false };
    }, { idempotencyKey, ...(admissionId !== '' ? { admissionId } : {}) });
    if (!result.replayed) countCredits({ kind: 'reserved', operation: op, credits: result.reservation.credits });
    return result;
  }

  /**
   * Raises a held transcription's hold to pay for at least `audioSeconds` of audio — and up to
   * `maxAudioSeconds` while the balance allows — at the rate it was reserved at, drawn like a
   * reserve (monthly first, then prepaid under the cap), all under the account lock. Not even
   * `audioSeconds` payable → insufficient_tokens / spending_cap_reached, nothing changed. A hold
   * that pays for enough already comes back unchanged; so does one no longer held (its state
   * says why), for the caller to stop.
   */
  async extendReservation(input: ExtendInput): Promise<ReservationRecord> {
    const { userId, reservationId, audioSeconds, maxAudioSeconds } = input;
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    checkAudioSeconds(audioSeconds, 'audio_seconds');
    checkAudioSeconds(maxAudioSeconds, 'max_audio_seconds');
    let movement: CreditMovement | undefined;
    const extended = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      movement = undefined;
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state !== 'held') return r;
      if (r.operation !== 'transcribe' || r.unitCredits <= 0) {
        throw new MurmurError('invalid_request', `Reservation ${r.id} was not priced by its audio; only a transcription's hold can be extended.`, {
          param: 'reservation_id',
        });
      }
      const need = transcriptionCredits(audioSeconds, r.unitCredits) - r.heldCredits;
      if (need <= 0) return r;
      const plan = planOf(account);
      const balance = balanceOf(account, plan);
      const wanted = transcriptionCredits(Math.max(audioSeconds, maxAudioSeconds), r.unitCredits) - r.heldCredits;
      // Whole priced minutes only, never less than what is needed now, never more than one hold may hold.
      const affordable = Math.floor(Math.min(wanted, affordableCredits(balance), MAX_RESERVE_CREDITS - r.heldCredits) / r.unitCredits) * r.unitCredits;
      const extra = Math.max(need, affordable);
      if (r.heldCredits + extra > MAX_RESERVE_CREDITS) {
        throw new MurmurError('invalid_request', `audio_seconds prices at more than one reservation may hold (${MAX_RESERVE_CREDITS}).`, { param: 'audio_seconds' });
      }
      const draw = drawCredits(balance, extra);
      if (typeof draw === 'string') throw refusalError(draw, account, plan, extra);
      const grown = await tx.growReservation(r.id, {
        credits: r.credits + extra,
        heldCredits: r.heldCredits + extra,
        monthlyCredits: r.monthlyCredits + draw.monthly,
        prepaidCredits: r.prepaidCredits + draw.prepaid,
        spendCents: r.spendCents + draw.spendCents,
      });
      await takeHold(account, tx, draw, extra, { kind: 'extend', reservationId: r.id, note: `transcribe: hold extended by ${plural(extra, 'credit')} to ${plural(grown.heldCredits, 'credit')} (${draw.monthly} monthly, ${draw.prepaid} prepaid)` }, now);
      movement = { kind: 'reserved', operation: r.operation, credits: extra };
      return grown;
    }, { reservationId });
    countCredits(movement);
    return extended;
  }

  /**
   * Settles a held reservation at `credits` (≤ held): the unused part returns, prepaid first
   * (undoing its spend), then monthly — except monthly credits of an earlier period, which
   * lapsed with it. Counts the operation in this period's usage. Committing a committed
   * reservation again returns it unchanged.
   */
  async commit(userId: string, reservationId: string, requested: number, usageSeconds: number, audioSeconds = 0): Promise<ReservationRecord> {
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    if (!Number.isSafeInteger(requested) || requested < 0) {
      throw new MurmurError('invalid_request', 'credits must be the final amount: a whole number from 0 to the credits held.', { param: 'credits' });
    }
    if (!Number.isSafeInteger(usageSeconds) || usageSeconds < 0) {
      throw new MurmurError('invalid_request', 'usage_seconds must be a whole number, 0 or more.', { param: 'usage_seconds' });
    }
    checkAudioSeconds(audioSeconds, 'audio_seconds');
    if (audioSeconds > 0 && requested > 0) {
      throw new MurmurError('invalid_request', 'Give either credits (the final amount) or audio_seconds (billing prices it), not both.', { param: 'credits' });
    }
    let movement: CreditMovement | undefined;
    const committed = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      movement = undefined;
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state === 'committed') return r;
      if (r.state !== 'held') throw notHeldError(r, 'committed');
      let credits = requested;
      if (audioSeconds > 0) {
        if (r.operation !== 'transcribe' || r.unitCredits <= 0) {
          throw new MurmurError('invalid_request', `Reservation ${r.id} was not priced by its audio; commit it with credits.`, { param: 'audio_seconds' });
        }
        credits = transcriptionCredits(audioSeconds, r.unitCredits);
        if (credits > r.heldCredits) {
          throw new MurmurError(
            'invalid_request',
            `${audioSeconds} s of audio cost ${plural(credits, 'credit')}, more than the ${r.heldCredits} held by ${r.id} (they pay for ${audioSecondsCovered(r.heldCredits, r.unitCredits)} s); extend the reservation first.`,
            { param: 'audio_seconds' },
          );
        }
      }
      if (credits > r.heldCredits) {
        throw new MurmurError('invalid_request', `credits (${credits}) must not exceed the ${r.heldCredits} credits held by ${r.id}.`, { param: 'credits' });
      }
      const settlement = settleHold(holdOf(r), r.prepaidCreditPriceCents, credits, r.periodStart.getTime() === account.periodStart.getTime());
      const settled = await tx.settleReservation(r.id, {
        state: 'committed',
        credits,
        monthlyCredits: settlement.kept.monthly,
        prepaidCredits: settlement.kept.prepaid,
        spendCents: settlement.kept.spendCents,
        usageSeconds,
        note: '',
        settledAt: now,
      });
      const transcribe = r.operation === 'transcribe';
      await tx.update(
        {
          monthlyRemaining: account.monthlyRemaining + settlement.monthlyReturned,
          prepaidRemaining: account.prepaidRemaining + settlement.prepaidReturned,
          spendCents: account.spendCents - settlement.spendReturnedCents,
          reserved: account.reserved - r.heldCredits,
          creditsUsed: account.creditsUsed + credits,
          transcriptions: account.transcriptions + (transcribe ? 1 : 0),
          conversions: account.conversions + (transcribe ? 0 : 1),
          transcriptionSeconds: account.transcriptionSeconds + (transcribe ? usageSeconds : 0),
        },
        now,
      );
      await tx.appendLedger({
        kind: 'commit',
        monthlyDelta: settlement.monthlyReturned,
        prepaidDelta: settlement.prepaidReturned,
        spendDeltaCents: -settlement.spendReturnedCents,
        reservationId: r.id,
        note: `${r.operation}: ${credits} of ${plural(r.heldCredits, 'credit')} charged` + lapsedNote(settlement.monthlyLapsed, r),
        createdAt: now,
      });
      movement = { kind: 'committed', operation: r.operation, credits };
      return settled;
    }, { reservationId });
    countCredits(movement);
    return committed;
  }

  /**
   * Returns a held reservation's credits in full (a failed or cancelled operation). Releasing
   * a released or expired reservation returns it unchanged: its credits are back already.
   */
  async release(userId: string, reservationId: string, reason: string): Promise<ReservationRecord> {
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    checkNote(reason, 'reason');
    let movement: CreditMovement | undefined;
    const released = await this.lifecycle.mutate(userId, async (account, tx, now) => {
      movement = undefined;
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state === 'released' || r.state === 'expired') return r;
      if (r.state === 'committed') {
        throw new MurmurError('invalid_request', `Reservation ${r.id} is already committed; a committed charge is final and cannot be released.`, {
          param: 'reservation_id',
        });
      }
      const { reservation } = await returnHold(account, tx, r, 'released', reason || 'released', now);
      movement = { kind: 'released', operation: r.operation, credits: r.heldCredits };
      return reservation;
    }, { reservationId });
    countCredits(movement);
    return released;
  }

  /**
   * Renews a held reservation's lease: its deadline becomes now + `holdSeconds`. A holder (the
   * transcription or conversion process doing the work) calls it every third of the lease, so
   * a holder that dies stops renewing and its credits come back one lease later — whichever
   * replica or restart notices nothing. A hold past its deadline was expired by the lock-taking
   * path before this runs: a lapsed lease is never revived, and like a released, expired or
   * committed reservation it comes back unchanged for the caller to read its state.
   */
  async renewReservation(userId: string, reservationId: string, holdSeconds: number): Promise<ReservationRecord> {
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    checkHoldSeconds(holdSeconds);
    return this.lifecycle.mutate(userId, async (_account, tx, now) => {
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state !== 'held') return r;
      return tx.extendReservation(r.id, new Date(now.getTime() + (holdSeconds || DEFAULT_HOLD_SECONDS) * 1000));
    }, { reservationId });
  }

  /**
   * One pass of the expiry sweeper: every held reservation past its deadline becomes expired,
   * its credits returned (with an "expire" ledger row), account by account in batches. An
   * account another transaction holds locked is skipped (SKIP LOCKED), never waited for: that
   * transaction expires the holds itself, or the next pass does. Also deletes admissions a day
   * after they expired. Returns how many reservations expired.
   */
  async sweepExpiredReservations(): Promise<number> {
    const now = this.clock.now();
    let expired = 0;
    const skipped: string[] = [];
    for (;;) {
      const users = await this.store.usersWithExpiredHolds(now, SWEEP_BATCH_SIZE, skipped);
      for (const userId of users) {
        const outcome = await this.store.withAccountIfUnlocked(userId, async (account, tx) => {
          const current = await this.lifecycle.rollPeriod(account, tx, now);
          return (await expireHolds(current, tx, now)).expired;
        });
        if (outcome.ran) expired += outcome.value;
        else skipped.push(userId);
      }
      if (users.length < SWEEP_BATCH_SIZE) break;
    }
    await this.store.deleteAdmissionsExpiredBefore(new Date(now.getTime() - ADMISSION_RETENTION_MS));
    return expired;
  }

  /** Takes one rate-limit slot or throws rate_limit_exceeded; a failing limiter is service_unavailable. */
  private async hitRateLimit(userId: string, plan: Readonly<billing.Plan>): Promise<RateLimitState> {
    let hit: RateLimitState & { allowed: boolean };
    try {
      hit = await this.limiter.hit(userId, plan.rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
    } catch (err) {
      this.log?.error({ err: err instanceof Error ? err.message : String(err) }, 'rate limiter failed');
      throw new MurmurError('service_unavailable', 'The rate limiter is unavailable right now; nothing was charged. Retry in a few seconds.');
    }
    const { allowed, ...state } = hit;
    if (!allowed) throw rateLimitError(state);
    return state;
  }

  /** Checks the admission belongs to this user and operation, is unexpired and unused, and consumes it. */
  private async consumeAdmission(tx: AccountTransaction, admissionId: string, op: OperationName, reservationId: string, now: Date): Promise<void> {
    const admission = await tx.findAdmission(admissionId);
    // Another user's admission gets the same answer as an unknown one.
    if (!admission) throw badAdmission('is unknown.');
    if (admission.operation !== op) throw badAdmission(`was issued for ${admission.operation}, not ${op}.`);
    if (admission.consumedAt) throw badAdmission(`was already used by reservation ${admission.reservationId}.`);
    if (admission.expiresAt.getTime() <= now.getTime()) throw badAdmission(`expired at ${admission.expiresAt.toISOString()}.`);
    if (!(await tx.consumeAdmission(admissionId, reservationId, now))) throw badAdmission('was already used.');
  }
}
