/**
 * Billing's domain rules (being split by concern; this file keeps charging): lazy accounts, the monthly period and its reset, plan changes, prepaid
 * grants, spending caps, support adjustments, the ledger, the rate-limit window, and charging —
 * admission (AdmitAiRequest), reserve → commit / release, and the expiry of forgotten holds.
 * Throws MurmurError only; knows no gRPC and no SQL.
 */
import { type Clock, type CursorCodec, isId, type Logger, MurmurError, newId, systemClock } from '@murmur/kit';
import { billing } from '@murmur/proto';
import {
  admissionRefusal,
  type Balance,
  conversionCredits,
  type Draw,
  drawCredits,
  isPeriodOver,
  periodContaining,
  periodLabel,
  periodsElapsed,
  RATE_LIMIT_WINDOW_SECONDS,
  type Refusal,
  settleHold,
  transcriptionCredits,
} from './limits';
import { DEFAULT_PLAN_ID, PLANS, planById } from './plans';
import type { RateLimiter, RateLimitState } from './rate-limiter';
import type {
  Account,
  AccountTransaction,
  BillingStore,
  LedgerEntryRecord,
  LedgerPosition,
  NewAccount,
  OperationName,
  ReservationRecord,
  ReservationStateName,
} from './store';

/** Most prepaid credits one grant may add (a typo guard on an app purchase, not a price limit). */
export const MAX_GRANT_CREDITS = 10_000_000;
/** Largest balance a support adjustment may set. */
export const MAX_ADJUST_CREDITS = 1_000_000_000;
/** Largest monthly spending cap a user may set: $1,000,000. */
export const MAX_SPENDING_CAP_CENTS = 100_000_000;
/** Longest note kept on a ledger row. */
export const MAX_NOTE_LENGTH = 500;
/** Ledger page size when the caller passes 0 (DESIGN §3 paging: default 20). */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest ledger page (DESIGN §3 paging: 1–100). */
export const MAX_PAGE_SIZE = 100;
/** How long an admission from AdmitAiRequest can be passed to Reserve: enough to upload 500 MB. */
export const ADMISSION_TTL_SECONDS = 5 * 60;
/** Hold of a reservation when the caller passes hold_seconds 0. */
export const DEFAULT_HOLD_SECONDS = 15 * 60;
/** Longest hold a caller may ask for. */
export const MAX_HOLD_SECONDS = 24 * 60 * 60;
/** Longest idempotency key (DESIGN §7: ≤ 255 characters). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Most credits one reservation may hold (the largest balance support can set). */
export const MAX_RESERVE_CREDITS = 1_000_000_000;
/** Accounts one sweep step fetches at a time. */
export const SWEEP_BATCH_SIZE = 100;
/** How long a used or expired admission is kept before the sweeper deletes it. */
export const ADMISSION_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What the domain needs: storage, the rate limiter, page-token signing and time. */
export interface BillingServiceOptions {
  store: BillingStore;
  limiter: RateLimiter;
  cursors: CursorCodec;
  clock?: Clock;
  /** Where a failing rate limiter is reported (its callers see service_unavailable). */
  log?: Logger;
}

/** The fields of a ReserveRequest. */
export interface ReserveInput {
  userId: string;
  operation: billing.Operation;
  /** Explicit amount; 0 prices the operation's quantity by the plan. */
  credits: number;
  idempotencyKey: string;
  /** '' → Reserve takes a rate-limit slot itself. */
  admissionId: string;
  audioSeconds: number;
  transcriptChars: number;
  /** 0 → {@link DEFAULT_HOLD_SECONDS}. */
  holdSeconds: number;
}

/** What AdmitAiRequest answers. */
export interface Admission {
  rateLimit: RateLimitState;
  admissionId: string;
}

/** A support adjustment: the new balances (absent = unchanged) and why. */
export interface AdjustCredits {
  monthlyCredits?: number;
  prepaidCredits?: number;
  note: string;
}

/** One page of a user's ledger; `nextPageToken` is empty on the last page. */
export interface LedgerPage {
  entries: billing.LedgerEntry[];
  nextPageToken: string;
}

interface LedgerCursor extends Record<string, unknown> {
  /** Owner the cursor was issued to: a cursor is not transferable between users. */
  u: string;
  /** created_at of the last row returned, epoch ms. */
  t: number;
  /** seq of the last row returned. */
  s: number;
}

function isLedgerCursor(value: unknown): value is LedgerCursor {
  const v = value as Partial<LedgerCursor> | null;
  return typeof v === 'object' && v !== null && typeof v.u === 'string' && Number.isSafeInteger(v.t) && Number.isSafeInteger(v.s);
}

function checkUserId(userId: string): void {
  if (!isId('usr', userId)) {
    throw new MurmurError('invalid_request', 'user_id must be a user id of the form usr_….', { param: 'user_id' });
  }
}

function checkHoldSeconds(holdSeconds: number): void {
  if (!Number.isInteger(holdSeconds) || holdSeconds < 0 || holdSeconds > MAX_HOLD_SECONDS) {
    throw new MurmurError('invalid_request', `hold_seconds must be from 1 to ${MAX_HOLD_SECONDS} (0 means ${DEFAULT_HOLD_SECONDS}).`, {
      param: 'hold_seconds',
    });
  }
}

function checkNote(note: string): void {
  if (note.length > MAX_NOTE_LENGTH) {
    throw new MurmurError('invalid_request', `note must be at most ${MAX_NOTE_LENGTH} characters.`, { param: 'note' });
  }
}

const OPERATION_NAMES = new Map<billing.Operation, OperationName>([
  [billing.Operation.OPERATION_TRANSCRIBE, 'transcribe'],
  [billing.Operation.OPERATION_CONVERT, 'convert'],
]);

const OPERATION_ENUMS: Record<OperationName, billing.Operation> = {
  transcribe: billing.Operation.OPERATION_TRANSCRIBE,
  convert: billing.Operation.OPERATION_CONVERT,
};

const STATE_ENUMS: Record<ReservationStateName, billing.ReservationState> = {
  held: billing.ReservationState.RESERVATION_STATE_HELD,
  committed: billing.ReservationState.RESERVATION_STATE_COMMITTED,
  released: billing.ReservationState.RESERVATION_STATE_RELEASED,
  expired: billing.ReservationState.RESERVATION_STATE_EXPIRED,
};

function checkOperation(operation: billing.Operation): OperationName {
  const name = OPERATION_NAMES.get(operation);
  if (!name) throw new MurmurError('invalid_request', 'operation must be OPERATION_TRANSCRIBE or OPERATION_CONVERT.', { param: 'operation' });
  return name;
}

function reservationNotFound(): MurmurError {
  return new MurmurError('not_found', 'No such reservation. Pass the id Reserve returned, with the same user_id.', { param: 'reservation_id' });
}

function toReservation(r: ReservationRecord): billing.Reservation {
  return {
    id: r.id,
    userId: r.userId,
    operation: OPERATION_ENUMS[r.operation],
    credits: r.credits,
    monthlyCredits: r.monthlyCredits,
    prepaidCredits: r.prepaidCredits,
    state: STATE_ENUMS[r.state],
    idempotencyKey: r.idempotencyKey,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
  };
}

/** What a held reservation took out of the balances. */
function holdOf(r: ReservationRecord): Draw {
  return { monthly: r.monthlyCredits, prepaid: r.prepaidCredits, spendCents: r.spendCents };
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

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** The refusal as the caller should read it: what was missing and what to do next. */
function refusalError(refusal: Refusal, account: Account, plan: Readonly<billing.Plan>, credits: number): MurmurError {
  const reset = account.periodEnd.toISOString();
  if (refusal === 'insufficient_tokens') {
    const left = account.monthlyRemaining + account.prepaidRemaining;
    return new MurmurError(
      'insufficient_tokens',
      `This call needs ${plural(credits, 'AI Credit')} and ${left.toLocaleString('en-US')} ${left === 1 ? 'is' : 'are'} left; nothing was charged. ` +
        `Buy prepaid credits or upgrade your plan in Settings → Billing; monthly credits reset at ${reset}.`,
    );
  }
  const prepaid = Math.max(0, credits - account.monthlyRemaining);
  return new MurmurError(
    'spending_cap_reached',
    `Drawing ${plural(prepaid, 'prepaid credit')} (${plural(prepaid * plan.prepaidCreditPriceCents, 'cent')}) would take this month's spend past ` +
      `the spending cap (${plural(account.spendCents, 'cent')} of ${plural(account.spendingCapCents, 'cent')} spent); nothing was charged. ` +
      `Raise the cap in Settings → Billing or wait for the monthly reset at ${reset}.`,
  );
}

/** rate_limit_exceeded with what the gateway needs for Retry-After and the RateLimit-* headers. */
function rateLimitError(state: RateLimitState): MurmurError {
  const retryAfter = Math.max(1, state.resetSeconds);
  return new MurmurError(
    'rate_limit_exceeded',
    `Too many AI requests: the limit is ${state.limit} per ${state.windowSeconds} seconds. Retry in ${plural(retryAfter, 'second')} (Retry-After).`,
    { meta: { retry_after: String(retryAfter), limit: String(state.limit), remaining: String(state.remaining), reset: String(retryAfter) } },
  );
}

function planOf(account: Account): Readonly<billing.Plan> {
  const plan = planById(account.planId);
  // Plans are only ever added to the config; an account on a removed plan is a deployment bug.
  if (!plan) throw new Error(`account is on plan "${account.planId}", which the plan config does not define`);
  return plan;
}

function toLedgerEntry(row: LedgerEntryRecord): billing.LedgerEntry {
  return {
    id: row.id,
    userId: row.userId,
    kind: row.kind,
    monthlyDelta: row.monthlyDelta,
    prepaidDelta: row.prepaidDelta,
    spendDeltaCents: row.spendDeltaCents,
    reservationId: row.reservationId ?? '',
    note: row.note,
    createdAt: row.createdAt,
  };
}

/** The billing domain. One instance per process; stateless apart from its dependencies. */
export class BillingService {
  private readonly store: BillingStore;
  private readonly limiter: RateLimiter;
  private readonly cursors: CursorCodec;
  private readonly clock: Clock;
  private readonly log: Logger | undefined;

  constructor(deps: BillingServiceOptions) {
    this.store = deps.store;
    this.limiter = deps.limiter;
    this.cursors = deps.cursors;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log;
  }

  /** Every plan of the config, cheapest first. */
  listPlans(): billing.Plan[] {
    return PLANS.map((plan) => ({ ...plan }));
  }

  /** Plan, balances, period, counters and rate-limit window; opens or rolls the account as needed. */
  async getUsage(userId: string): Promise<billing.Usage> {
    checkUserId(userId);
    return this.usageOf(await this.currentAccount(userId));
  }

  /**
   * Moves the user to `planId`. Limits (rate, sizes, costs) apply at once; the new monthly
   * allowance applies from the next reset, so the current period's balance is neither topped
   * up on an upgrade nor clawed back on a downgrade. A spending cap still at the old plan's
   * default follows to the new plan's default; a cap the user chose is kept. A user with no
   * account yet is opened directly on `planId` with its full allowance (signing up on a plan).
   */
  async changePlan(userId: string, planId: string): Promise<billing.Usage> {
    checkUserId(userId);
    const plan = planById(planId);
    if (!plan) {
      throw new MurmurError('invalid_request', `Unknown plan "${planId.slice(0, 64)}". Use an id from ListPlans: ${PLANS.map((p) => p.id).join(', ')}.`, {
        param: 'plan_id',
      });
    }
    const account = await this.mutate(userId, async (account, tx, now) => {
      if (account.planId === plan.id) return account;
      const old = planOf(account);
      const capFollows = account.spendingCapCents === old.defaultSpendingCapCents;
      const updated = await tx.update(
        { planId: plan.id, ...(capFollows ? { spendingCapCents: plan.defaultSpendingCapCents } : {}) },
        now,
      );
      await tx.appendLedger({
        kind: 'adjust',
        note: `plan changed from ${old.id} to ${plan.id}; the ${plan.monthlyCredits}-credit monthly allowance applies from the next reset`,
        createdAt: now,
      });
      return updated;
    }, plan.id);
    return this.usageOf(account);
  }

  /** Adds prepaid credits (an in-app purchase). */
  async grantPrepaidCredits(userId: string, credits: number, note: string): Promise<billing.Usage> {
    checkUserId(userId);
    if (!Number.isSafeInteger(credits) || credits <= 0 || credits > MAX_GRANT_CREDITS) {
      throw new MurmurError('invalid_request', `credits must be a whole number from 1 to ${MAX_GRANT_CREDITS.toLocaleString('en-US')}.`, {
        param: 'credits',
      });
    }
    checkNote(note);
    const account = await this.mutate(userId, async (account, tx, now) => {
      const updated = await tx.update({ prepaidRemaining: account.prepaidRemaining + credits }, now);
      await tx.appendLedger({ kind: 'grant', prepaidDelta: credits, note, createdAt: now });
      return updated;
    });
    return this.usageOf(account);
  }

  /** Sets the monthly cap on spending (drawing prepaid credits); 0 forbids drawing them at all. */
  async setSpendingCap(userId: string, capCents: number): Promise<billing.Usage> {
    checkUserId(userId);
    if (!Number.isSafeInteger(capCents) || capCents < 0 || capCents > MAX_SPENDING_CAP_CENTS) {
      throw new MurmurError('invalid_request', `cap_cents must be a whole number of cents from 0 to ${MAX_SPENDING_CAP_CENTS}.`, {
        param: 'cap_cents',
      });
    }
    // The cap is a limit, not a movement of credits or money, so it writes no ledger row.
    const account = await this.mutate(userId, (account, tx, now) =>
      account.spendingCapCents === capCents ? Promise.resolve(account) : tx.update({ spendingCapCents: capCents }, now),
    );
    return this.usageOf(account);
  }

  /** Support adjustment: sets the monthly and/or prepaid balance; one "adjust" ledger row with the deltas. */
  async adjustCredits(userId: string, adjust: AdjustCredits): Promise<billing.Usage> {
    checkUserId(userId);
    const { monthlyCredits, prepaidCredits, note } = adjust;
    if (monthlyCredits === undefined && prepaidCredits === undefined) {
      throw new MurmurError('invalid_request', 'Set monthly_credits, prepaid_credits or both to the new balance.', { param: 'monthly_credits' });
    }
    for (const [param, value] of [['monthly_credits', monthlyCredits], ['prepaid_credits', prepaidCredits]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 0 || value > MAX_ADJUST_CREDITS)) {
        throw new MurmurError('invalid_request', `${param} must be a whole number from 0 to ${MAX_ADJUST_CREDITS}.`, { param });
      }
    }
    checkNote(note);
    const account = await this.mutate(userId, async (account, tx, now) => {
      const updated = await tx.update({ monthlyRemaining: monthlyCredits, prepaidRemaining: prepaidCredits }, now);
      await tx.appendLedger({
        kind: 'adjust',
        monthlyDelta: updated.monthlyRemaining - account.monthlyRemaining,
        prepaidDelta: updated.prepaidRemaining - account.prepaidRemaining,
        note,
        createdAt: now,
      });
      return updated;
    });
    return this.usageOf(account);
  }

  /** The user's AI rate-limit window, without taking a slot. */
  async getRateLimit(userId: string): Promise<RateLimitState> {
    checkUserId(userId);
    const account = await this.currentAccount(userId);
    return this.limiter.peek(userId, planOf(account).rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
  }

  /** One page of the user's ledger, newest first. */
  async listLedgerEntries(userId: string, pageSize: number, pageToken: string): Promise<LedgerPage> {
    checkUserId(userId);
    if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
      throw new MurmurError('invalid_request', `page_size must be from 1 to ${MAX_PAGE_SIZE} (0 means ${DEFAULT_PAGE_SIZE}).`, { param: 'page_size' });
    }
    const limit = pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
    let after: LedgerPosition | undefined;
    if (pageToken !== '') {
      const badToken = new MurmurError('invalid_request', 'page_token is not valid. Pass next_page_token from the previous page unchanged.', {
        param: 'page_token',
      });
      let cursor: LedgerCursor;
      try {
        cursor = this.cursors.decode(pageToken, isLedgerCursor);
      } catch {
        throw badToken;
      }
      if (cursor.u !== userId) throw badToken;
      after = { createdAt: new Date(cursor.t), seq: cursor.s };
    }
    // Roll the period first, so a reset that is due shows up on the first page.
    await this.currentAccount(userId);
    const rows = await this.store.listLedgerEntries(userId, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextPageToken =
      rows.length > limit && last ? this.cursors.encode({ u: userId, t: last.createdAt.getTime(), s: last.seq } satisfies LedgerCursor) : '';
    return { entries: page.map(toLedgerEntry), nextPageToken };
  }

  /**
   * The pre-body check of an AI call. Credits and cap first (read-only: a one-credit charge
   * must be possible now), then one rate-limit slot — so a user with nothing left burns no
   * slots. Charges nothing; the admission it returns lets Reserve skip a second slot.
   */
  async admitAiRequest(userId: string, operation: billing.Operation): Promise<Admission> {
    checkUserId(userId);
    const op = checkOperation(operation);
    const account = await this.currentAccount(userId);
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
   * AdmitAiRequest), so a direct internal call is limited the same way.
   */
  async reserve(input: ReserveInput): Promise<billing.Reservation> {
    const { userId, idempotencyKey, admissionId, credits, audioSeconds, transcriptChars, holdSeconds } = input;
    checkUserId(userId);
    const op = checkOperation(input.operation);
    if (idempotencyKey.length === 0 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw new MurmurError('invalid_request', `idempotency_key is required: 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, one per AI call of this user.`, {
        param: 'idempotency_key',
      });
    }
    if (!Number.isSafeInteger(credits) || credits < 0 || credits > MAX_RESERVE_CREDITS) {
      throw new MurmurError('invalid_request', `credits must be a whole number from 0 to ${MAX_RESERVE_CREDITS} (0 prices the quantity by the plan).`, {
        param: 'credits',
      });
    }
    if (!Number.isFinite(audioSeconds) || audioSeconds < 0) {
      throw new MurmurError('invalid_request', 'audio_seconds must be a finite number of seconds, 0 or more.', { param: 'audio_seconds' });
    }
    if (!Number.isSafeInteger(transcriptChars) || transcriptChars < 0) {
      throw new MurmurError('invalid_request', 'transcript_chars must be a whole number, 0 or more.', { param: 'transcript_chars' });
    }
    checkHoldSeconds(holdSeconds);
    if (admissionId !== '' && !isId('adm', admissionId)) throw this.badAdmission('is not an admission id of the form adm_….');

    return this.mutate(userId, async (account, tx, now) => {
      const existing = await tx.findReservationByKey(idempotencyKey);
      if (existing) return toReservation(existing);

      const plan = planOf(account);
      const priced = op === 'transcribe'
        ? () => transcriptionCredits(audioSeconds, plan.transcriptionCreditsPerMinute)
        : () => conversionCredits(transcriptChars, plan.conversionCreditsPer1kChars);
      const amount = credits > 0 ? credits : priced();
      if (amount > MAX_RESERVE_CREDITS) {
        const param = op === 'transcribe' ? 'audio_seconds' : 'transcript_chars';
        throw new MurmurError('invalid_request', `${param} prices at ${amount} credits, more than one reservation may hold (${MAX_RESERVE_CREDITS}).`, { param });
      }
      const id = newId('rsv');
      if (admissionId !== '') await this.consumeAdmission(tx, admissionId, op, id, now);
      const draw = drawCredits(balanceOf(account, plan), amount);
      if (typeof draw === 'string') throw refusalError(draw, account, plan, amount);
      if (admissionId === '') await this.hitRateLimit(userId, plan);

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
      });
      await tx.update(
        {
          monthlyRemaining: account.monthlyRemaining - draw.monthly,
          prepaidRemaining: account.prepaidRemaining - draw.prepaid,
          reserved: account.reserved + amount,
          spendCents: account.spendCents + draw.spendCents,
        },
        now,
      );
      await tx.appendLedger({
        kind: 'reserve',
        monthlyDelta: -draw.monthly,
        prepaidDelta: -draw.prepaid,
        spendDeltaCents: draw.spendCents,
        reservationId: id,
        note: `${op}: ${plural(amount, 'credit')} held (${draw.monthly} monthly, ${draw.prepaid} prepaid)`,
        createdAt: now,
      });
      return toReservation(reservation);
    });
  }

  /**
   * Settles a held reservation at `credits` (≤ held): the unused part returns, prepaid first
   * (undoing its spend), then monthly — except monthly credits of an earlier period, which
   * lapsed with it. Counts the operation in this period's usage. Committing a committed
   * reservation again returns it unchanged.
   */
  async commit(userId: string, reservationId: string, credits: number, usageSeconds: number): Promise<billing.Reservation> {
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    if (!Number.isSafeInteger(credits) || credits < 0) {
      throw new MurmurError('invalid_request', 'credits must be the final amount: a whole number from 0 to the credits held.', { param: 'credits' });
    }
    if (!Number.isSafeInteger(usageSeconds) || usageSeconds < 0) {
      throw new MurmurError('invalid_request', 'usage_seconds must be a whole number, 0 or more.', { param: 'usage_seconds' });
    }
    return this.mutate(userId, async (account, tx, now) => {
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state === 'committed') return toReservation(r);
      if (r.state !== 'held') throw this.notHeld(r, 'committed');
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
        note: `${r.operation}: ${credits} of ${plural(r.heldCredits, 'credit')} charged` + this.lapsedNote(settlement.monthlyLapsed, r),
        createdAt: now,
      });
      return toReservation(settled);
    });
  }

  /**
   * Returns a held reservation's credits in full (a failed or cancelled operation). Releasing
   * a released or expired reservation returns it unchanged: its credits are back already.
   */
  async release(userId: string, reservationId: string, reason: string): Promise<billing.Reservation> {
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    if (reason.length > MAX_NOTE_LENGTH) {
      throw new MurmurError('invalid_request', `reason must be at most ${MAX_NOTE_LENGTH} characters.`, { param: 'reason' });
    }
    return this.mutate(userId, async (account, tx, now) => {
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state === 'released' || r.state === 'expired') return toReservation(r);
      if (r.state === 'committed') {
        throw new MurmurError('invalid_request', `Reservation ${r.id} is already committed; a committed charge is final and cannot be released.`, {
          param: 'reservation_id',
        });
      }
      const { reservation } = await this.returnHold(account, tx, r, 'released', reason || 'released', now);
      return toReservation(reservation);
    });
  }

  /**
   * Renews a held reservation's lease: its deadline becomes now + `holdSeconds`. A holder (the
   * transcription or conversion process doing the work) calls it every third of the lease, so
   * a holder that dies stops renewing and its credits come back one lease later — whichever
   * replica or restart notices nothing. A hold past its deadline was expired by the lock-taking
   * path before this runs: a lapsed lease is never revived, and like a released, expired or
   * committed reservation it comes back unchanged for the caller to read its state.
   */
  async renewReservation(userId: string, reservationId: string, holdSeconds: number): Promise<billing.Reservation> {
    checkUserId(userId);
    if (!isId('rsv', reservationId)) throw reservationNotFound();
    checkHoldSeconds(holdSeconds);
    return this.mutate(userId, async (_account, tx, now) => {
      const r = await tx.findReservation(reservationId);
      if (!r) throw reservationNotFound();
      if (r.state !== 'held') return toReservation(r);
      return toReservation(await tx.extendReservation(r.id, new Date(now.getTime() + (holdSeconds || DEFAULT_HOLD_SECONDS) * 1000)));
    });
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
          const current = await this.rollPeriod(account, tx, now);
          return (await this.expireHolds(current, tx, now)).expired;
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

  private badAdmission(why: string): MurmurError {
    return new MurmurError('invalid_request', `admission_id ${why} Call AdmitAiRequest for a new one, or pass '' to have Reserve admit the call.`, {
      param: 'admission_id',
    });
  }

  /** Checks the admission belongs to this user and operation, is unexpired and unused, and consumes it. */
  private async consumeAdmission(tx: AccountTransaction, admissionId: string, op: OperationName, reservationId: string, now: Date): Promise<void> {
    const admission = await tx.findAdmission(admissionId);
    // Another user's admission gets the same answer as an unknown one.
    if (!admission) throw this.badAdmission('is unknown.');
    if (admission.operation !== op) throw this.badAdmission(`was issued for ${admission.operation}, not ${op}.`);
    if (admission.consumedAt) throw this.badAdmission(`was already used by reservation ${admission.reservationId}.`);
    if (admission.expiresAt.getTime() <= now.getTime()) throw this.badAdmission(`expired at ${admission.expiresAt.toISOString()}.`);
    if (!(await tx.consumeAdmission(admissionId, reservationId, now))) throw this.badAdmission('was already used.');
  }

  private notHeld(r: ReservationRecord, verb: string): MurmurError {
    const what = r.state === 'expired' ? `its hold expired at ${r.expiresAt.toISOString()}` : 'it was released';
    return new MurmurError('invalid_request', `Reservation ${r.id} cannot be ${verb}: ${what}, and its credits were returned. Reserve again.`, {
      param: 'reservation_id',
    });
  }

  private lapsedNote(lapsed: number, r: ReservationRecord): string {
    return lapsed > 0 ? `; ${plural(lapsed, 'monthly credit')} of period ${periodLabel(r.periodStart)} not returned (lapsed with that period)` : '';
  }

  /**
   * Returns a held reservation's credits in full and moves it to `state` (released or expired)
   * with one ledger row of the same name. The account must be the locked, current one.
   */
  private async returnHold(
    account: Account,
    tx: AccountTransaction,
    r: ReservationRecord,
    state: 'released' | 'expired',
    note: string,
    now: Date,
  ): Promise<{ account: Account; reservation: ReservationRecord }> {
    const settlement = settleHold(holdOf(r), r.prepaidCreditPriceCents, 0, r.periodStart.getTime() === account.periodStart.getTime());
    // A released or expired reservation keeps showing what it held.
    const reservation = await tx.settleReservation(r.id, {
      state,
      credits: r.credits,
      monthlyCredits: r.monthlyCredits,
      prepaidCredits: r.prepaidCredits,
      spendCents: r.spendCents,
      usageSeconds: 0,
      note,
      settledAt: now,
    });
    const updated = await tx.update(
      {
        monthlyRemaining: account.monthlyRemaining + settlement.monthlyReturned,
        prepaidRemaining: account.prepaidRemaining + settlement.prepaidReturned,
        spendCents: account.spendCents - settlement.spendReturnedCents,
        reserved: account.reserved - r.heldCredits,
      },
      now,
    );
    await tx.appendLedger({
      kind: state === 'released' ? 'release' : 'expire',
      monthlyDelta: settlement.monthlyReturned,
      prepaidDelta: settlement.prepaidReturned,
      spendDeltaCents: -settlement.spendReturnedCents,
      reservationId: r.id,
      note: note + this.lapsedNote(settlement.monthlyLapsed, r),
      createdAt: now,
    });
    return { account: updated, reservation };
  }

  /** Expires this locked account's held reservations past their deadline. */
  private async expireHolds(account: Account, tx: AccountTransaction, now: Date): Promise<{ account: Account; expired: number }> {
    const holds = await tx.expiredHolds(now);
    let current = account;
    for (const r of holds) {
      current = (await this.returnHold(current, tx, r, 'expired', `hold expired at ${r.expiresAt.toISOString()} without commit or release`, now)).account;
    }
    return { account: current, expired: holds.length };
  }

  /**
   * The account as of now: read without locking when it exists and its period is current (the
   * common case), otherwise opened or rolled over under the row lock.
   */
  private async currentAccount(userId: string): Promise<Account> {
    const now = this.clock.now();
    const found = await this.store.findAccount(userId, now);
    if (found && !found.hasExpiredHolds && !isPeriodOver(found.account.periodEnd, now)) return found.account;
    return this.mutate(userId, async (account) => account);
  }

  /**
   * Runs `change` on the locked, current account: opens it on first use (free plan, full
   * allowance, plan default cap), resets it first when its period is over, and expires its
   * holds past their deadline — all in one transaction with the change itself.
   */
  private async mutate<T>(
    userId: string,
    change: (account: Account, tx: AccountTransaction, now: Date) => Promise<T>,
    openOnPlan?: string,
  ): Promise<T> {
    const now = this.clock.now();
    return this.store.withAccount(userId, this.newAccount(userId, now, openOnPlan), async (account, tx, created) => {
      if (created) {
        await tx.appendLedger({
          kind: 'reset',
          monthlyDelta: account.monthlyRemaining,
          note: `account opened on the ${account.planId} plan; period ${periodLabel(account.periodStart)}`,
          createdAt: now,
        });
      }
      const rolled = await this.rollPeriod(account, tx, now);
      const { account: current } = await this.expireHolds(rolled, tx, now);
      return change(current, tx, now);
    });
  }

  /**
   * When `now` is past the account's period: monthly credits back to the plan allowance (no
   * rollover), spend and counters to zero, period moved to the month containing `now` — one
   * "reset" row however many months were skipped. Prepaid credits and reservations are kept.
   */
  private async rollPeriod(account: Account, tx: AccountTransaction, now: Date): Promise<Account> {
    if (!isPeriodOver(account.periodEnd, now)) return account;
    const plan = planOf(account);
    const period = periodContaining(now);
    const skipped = periodsElapsed(account.periodStart, now);
    const updated = await tx.update(
      {
        monthlyRemaining: plan.monthlyCredits,
        spendCents: 0,
        creditsUsed: 0,
        transcriptions: 0,
        transcriptionSeconds: 0,
        conversions: 0,
        periodStart: period.start,
        periodEnd: period.end,
      },
      now,
    );
    await tx.appendLedger({
      kind: 'reset',
      monthlyDelta: plan.monthlyCredits - account.monthlyRemaining,
      spendDeltaCents: -account.spendCents,
      note: `period ${periodLabel(period.start)}: ${plan.monthlyCredits} monthly credits on the ${plan.id} plan` +
        (skipped > 1 ? ` (${skipped - 1} idle month${skipped > 2 ? 's' : ''} skipped, no rollover)` : ''),
      createdAt: now,
    });
    return updated;
  }

  private newAccount(userId: string, now: Date, planId = DEFAULT_PLAN_ID): NewAccount {
    const plan = planById(planId)!;
    const period = periodContaining(now);
    return {
      userId,
      planId: plan.id,
      monthlyRemaining: plan.monthlyCredits,
      prepaidRemaining: 0,
      reserved: 0,
      periodStart: period.start,
      periodEnd: period.end,
      spendingCapCents: plan.defaultSpendingCapCents,
      spendCents: 0,
      creditsUsed: 0,
      transcriptions: 0,
      transcriptionSeconds: 0,
      conversions: 0,
      createdAt: now,
    };
  }

  private async usageOf(account: Account): Promise<billing.Usage> {
    const plan = planOf(account);
    const rateLimit = await this.limiter.peek(account.userId, plan.rateLimitPerMinute, RATE_LIMIT_WINDOW_SECONDS);
    return {
      userId: account.userId,
      plan: { ...plan },
      monthlyCreditsRemaining: account.monthlyRemaining,
      prepaidCreditsRemaining: account.prepaidRemaining,
      periodStart: account.periodStart,
      periodEnd: account.periodEnd,
      spendingCapCents: account.spendingCapCents,
      spendCents: account.spendCents,
      rateLimit,
      creditsUsed: account.creditsUsed,
      transcriptions: account.transcriptions,
      transcriptionSeconds: account.transcriptionSeconds,
      conversions: account.conversions,
      creditsReserved: account.reserved,
    };
  }
}
