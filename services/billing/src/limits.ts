/**
 * Billing's limits and pure arithmetic: the bounds every caller is held to, billing periods, the
 * sliding rate-limit window, prices, and how a charge is drawn from and returned to the
 * balances. No I/O and no clock of its own, so every boundary (month lengths, leap years, year
 * ends, the instant a rate-limit slot frees, the last credit under a cap, a refund across a
 * period boundary) is pinned down by table tests.
 */

/** Length of the AI rate-limit window (DESIGN §5: "10 AI requests a minute"). */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** Most prepaid credits one grant may add (a typo guard on an app purchase, not a price limit). */
export const MAX_GRANT_CREDITS = 10_000_000;
/** Largest balance a support adjustment may set. */
export const MAX_ADJUST_CREDITS = 1_000_000_000;
/** Largest monthly spending cap a user may set: $1,000,000. */
export const MAX_SPENDING_CAP_CENTS = 100_000_000;
/** Longest note kept on a ledger row. */
export const MAX_NOTE_LENGTH = 500;
/** How long an admission from AdmitAiRequest can be passed to Reserve: enough to upload 500 MB. */
export const ADMISSION_TTL_SECONDS = 5 * 60;
/** Hold of a reservation when the caller passes hold_seconds 0. */
export const DEFAULT_HOLD_SECONDS = 15 * 60;
/** Longest hold a caller may ask for. */
export const MAX_HOLD_SECONDS = 24 * 60 * 60;
/** Most credits one reservation may hold (the largest balance support can set). */
export const MAX_RESERVE_CREDITS = 1_000_000_000;
/** Longest request fingerprint (a hex SHA-256 is 64; room for a prefix naming the digest). */
export const MAX_FINGERPRINT_LENGTH = 128;

/** A billing period: `[start, end)`, both instants in UTC. */
export interface Period {
  start: Date;
  end: Date;
}

/**
 * The calendar month in UTC that contains `at`: from the first instant of that month up to
 * (excluding) the first instant of the next. Periods are calendar months rather than "30 days
 * from sign-up" so every user's allowance resets on the same, predictable date.
 */
export function periodContaining(at: Date): Period {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  // Date.UTC rolls month 12 over into January of the next year.
  return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

/** True once `now` has reached the end of the period (the end instant belongs to the next one). */
export function isPeriodOver(periodEnd: Date, now: Date): boolean {
  return now.getTime() >= periodEnd.getTime();
}

/**
 * How many period boundaries lie between a period that started at `periodStart` and `now`
 * (0 while still inside it). An account idle for three months crosses three boundaries, yet is
 * reset only once: there is no rollover, so the months in between leave no trace.
 */
export function periodsElapsed(periodStart: Date, now: Date): number {
  const months = (now.getUTCFullYear() - periodStart.getUTCFullYear()) * 12 + (now.getUTCMonth() - periodStart.getUTCMonth());
  return Math.max(0, months);
}

/** One UTC day in epoch milliseconds (epoch time has no leap seconds). */
const UTC_DAY_MS = 24 * 60 * 60 * 1000;

/** The first instant of the UTC day after the one containing `at`: the exclusive end of "through that day". */
export function startOfNextUtcDay(at: Date): Date {
  return new Date((Math.floor(at.getTime() / UTC_DAY_MS) + 1) * UTC_DAY_MS);
}

/**
 * Every UTC day from the one containing `from` through the one containing `through`, as
 * `YYYY-MM-DD`, oldest first; none when `through` is earlier. The Usage page charts each day of
 * the period so far, days without calls included, so the days come from here and not from the
 * charges.
 */
export function utcDays(from: Date, through: Date): string[] {
  const days: string[] = [];
  for (let day = Math.floor(from.getTime() / UTC_DAY_MS) * UTC_DAY_MS; day <= through.getTime(); day += UTC_DAY_MS) {
    days.push(new Date(day).toISOString().slice(0, 10));
  }
  return days;
}

/** `YYYY-MM` of the period starting at `periodStart`, for ledger notes. */
export function periodLabel(periodStart: Date): string {
  return periodStart.toISOString().slice(0, 7);
}

/** What a sliding window says about one user right now. */
export interface WindowState {
  limit: number;
  remaining: number;
  windowSeconds: number;
  /**
   * Whole seconds until the next used slot frees (rounded up, so waiting that long always
   * suffices): with the window full, when a request is admitted again; with slots left, when
   * the oldest hit leaves the window and the remaining count grows. 0 only when no hit is in
   * the window (the whole limit is free).
   */
  resetSeconds: number;
}

/**
 * Which hit of a full window frees the next slot: 0-based, oldest first, among the `count` hits
 * still in the window. It is the very oldest unless the limit was lowered while hits were in the
 * window, in which case the count must drop to `limit - 1` first.
 */
export function freeingHitIndex(count: number, limit: number): number {
  return Math.max(0, count - limit);
}

/**
 * The state of a sliding-window log holding `count` hits later than `nowMs - windowMs`. A hit
 * at `t` occupies its slot until `t + windowMs` exactly. `freeingHitMs` is the time of the hit
 * at {@link freeingHitIndex} (needed whenever the window holds a hit).
 *
 * The reset is reported also while slots are left (it was 0 then, which told a client that had
 * just spent two of ten slots that nothing was spent): RateLimit headers promise the time until
 * quota comes back, and a sliding window gives it back one hit at a time.
 *
 * Both rate limiters (Redis and in-process) feed their raw numbers through this one function,
 * so they cannot disagree on what they report.
 */
export function windowState(count: number, freeingHitMs: number | undefined, nowMs: number, limit: number, windowSeconds: number): WindowState {
  const remaining = Math.max(0, limit - count);
  let resetSeconds = 0;
  if (count > 0) {
    resetSeconds =
      freeingHitMs === undefined ? windowSeconds : Math.max(1, Math.ceil((freeingHitMs + windowSeconds * 1000 - nowMs) / 1000));
  }
  return { limit, remaining, windowSeconds, resetSeconds };
}

/** Seconds of audio one transcription price unit covers: transcription is priced per started minute. */
export const SECONDS_PER_PRICED_MINUTE = 60;
/** Transcript characters one conversion price unit covers: conversion is priced per started 1,000. */
export const CHARS_PER_PRICED_THOUSAND = 1_000;

/**
 * Credits a transcription of `audioSeconds` costs, as in the app: every started minute at the
 * plan's per-minute price, and never less than one credit (even zero seconds ran the engine).
 */
export function transcriptionCredits(audioSeconds: number, creditsPerMinute: number): number {
  return Math.max(1, Math.ceil(audioSeconds / SECONDS_PER_PRICED_MINUTE) * creditsPerMinute);
}

/** Credits a conversion of `transcriptChars` costs: every started 1,000 characters, at least one credit. */
export function conversionCredits(transcriptChars: number, creditsPer1kChars: number): number {
  return Math.max(1, Math.ceil(transcriptChars / CHARS_PER_PRICED_THOUSAND) * creditsPer1kChars);
}

/**
 * Seconds of audio `heldCredits` pay for at `creditsPerMinute`: whole priced minutes. A plan that
 * prices audio at 0 has every length paid for by the minimum credit (Infinity).
 */
export function audioSecondsCovered(heldCredits: number, creditsPerMinute: number): number {
  if (creditsPerMinute <= 0) return Number.POSITIVE_INFINITY;
  return Math.floor(heldCredits / creditsPerMinute) * SECONDS_PER_PRICED_MINUTE;
}

/** What an account can spend right now, as the charging rules see it. */
export interface Balance {
  monthly: number;
  prepaid: number;
  /** This period's spend, held reservations included. */
  spendCents: number;
  capCents: number;
  /** Price of one prepaid credit on the account's plan. */
  priceCents: number;
}

/** How a charge splits over the two balances, and the spend its prepaid part counts for. */
export interface Draw {
  monthly: number;
  prepaid: number;
  spendCents: number;
}

/** Why a charge cannot be drawn: the public error codes of DESIGN §5. */
export type Refusal = 'insufficient_tokens' | 'spending_cap_reached';

/**
 * Draws `credits` monthly first, then prepaid — all or nothing. More than both balances hold →
 * `insufficient_tokens` (checked first: the cap is moot when the credits are not there); a
 * prepaid part whose spend would take this period past the cap → `spending_cap_reached`. The
 * spend is counted at reserve time, so holds in flight can never pass the cap together.
 */
export function drawCredits(balance: Balance, credits: number): Draw | Refusal {
  const monthly = Math.min(Math.max(0, balance.monthly), credits);
  const prepaid = credits - monthly;
  if (prepaid > balance.prepaid) return 'insufficient_tokens';
  const spendCents = prepaid * balance.priceCents;
  if (prepaid > 0 && balance.spendCents + spendCents > balance.capCents) return 'spending_cap_reached';
  return { monthly, prepaid, spendCents };
}

/**
 * The most credits {@link drawCredits} would draw now: every monthly credit, then the prepaid
 * ones that fit under the cap (all of them at a price of 0).
 */
export function affordableCredits(balance: Balance): number {
  const monthly = Math.max(0, balance.monthly);
  const prepaid = Math.max(0, balance.prepaid);
  if (balance.priceCents <= 0) return monthly + prepaid;
  const underCap = Math.max(0, Math.floor((balance.capCents - balance.spendCents) / balance.priceCents));
  return monthly + Math.min(prepaid, underCap);
}

/**
 * The pre-body check of an AI call (AdmitAiRequest): refused exactly when a one-credit charge
 * would be refused now — nothing left at all, or only prepaid credits left and not even one of
 * them fits under the cap.
 */
export function admissionRefusal(balance: Balance): Refusal | undefined {
  const draw = drawCredits(balance, 1);
  return typeof draw === 'string' ? draw : undefined;
}

/** What settling a hold gives back now, and what it keeps as its final charge. */
export interface Settlement {
  /** The final charge and its split (prepaid kept last: refunds return prepaid first). */
  kept: Draw;
  /** Back to the balances now. */
  monthlyReturned: number;
  prepaidReturned: number;
  spendReturnedCents: number;
  /** Monthly credits of an earlier period that are not returned: they lapsed with their period. */
  monthlyLapsed: number;
}

/**
 * Settles `hold` (drawn at `priceCents` per prepaid credit) at `finalCredits` (≤ held; 0 for a
 * release or an expiry). The unused part returns prepaid first — so the spend it counted for is
 * undone first — then monthly. When the hold was drawn in an earlier period (`samePeriod`
 * false), the period reset has already restored the monthly allowance and zeroed the spend: the
 * monthly part is not returned (it would be granted twice) and no spend is refunded (it was
 * never counted in this period); prepaid credits never expire and always return.
 */
export function settleHold(hold: Draw, priceCents: number, finalCredits: number, samePeriod: boolean): Settlement {
  const held = hold.monthly + hold.prepaid;
  if (!Number.isSafeInteger(finalCredits) || finalCredits < 0 || finalCredits > held) {
    throw new RangeError(`final credits ${finalCredits} outside 0..${held}`);
  }
  const unused = held - finalCredits;
  const prepaidBack = Math.min(unused, hold.prepaid);
  const monthlyBack = unused - prepaidBack;
  const kept: Draw = { monthly: hold.monthly - monthlyBack, prepaid: hold.prepaid - prepaidBack, spendCents: hold.spendCents - prepaidBack * priceCents };
  return {
    kept,
    monthlyReturned: samePeriod ? monthlyBack : 0,
    prepaidReturned: prepaidBack,
    spendReturnedCents: samePeriod ? hold.spendCents - kept.spendCents : 0,
    monthlyLapsed: samePeriod ? 0 : monthlyBack,
  };
}
