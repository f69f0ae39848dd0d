/**
 * What billing says to a caller it refuses, and the notes it writes on ledger rows: every
 * refusal says what was missing and what to do next, in one place so the wording stays one voice.
 */
import { MurmurError } from '@murmur/contract';
import type { billing } from '@murmur/proto';
import { periodLabel, type Refusal } from './limits';
import type { RateLimitState } from './rate-limiter';
import type { Account, ReservationRecord } from './store';

/** "1 credit", "1,000 credits". */
export const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/** The refusal as the caller should read it: what was missing and what to do next. */
export function refusalError(refusal: Refusal, account: Account, plan: Readonly<billing.Plan>, credits: number): MurmurError {
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

/**
 * A conversion over the plan's size limit: invalid_request on the caller's `transcript`, naming
 * the limit, before anything is reserved.
 */
export function transcriptTooLong(chars: number, plan: Readonly<billing.Plan>): MurmurError {
  return new MurmurError(
    'invalid_request',
    `The transcript is ${chars.toLocaleString('en-US')} characters; the ${plan.name} plan converts at most ${plan.maxTranscriptChars.toLocaleString('en-US')} characters per request. ` +
      'Send a shorter transcript or upgrade the plan in Settings → Billing.',
    { param: 'transcript', meta: { max_transcript_chars: String(plan.maxTranscriptChars), transcript_chars: String(chars) } },
  );
}

/** rate_limit_exceeded with what the gateway needs for Retry-After and the RateLimit-* headers. */
export function rateLimitError(state: RateLimitState): MurmurError {
  const retryAfter = Math.max(1, state.resetSeconds);
  return new MurmurError(
    'rate_limit_exceeded',
    `Too many AI requests: the limit is ${state.limit} per ${state.windowSeconds} seconds. Retry in ${plural(retryAfter, 'second')} (Retry-After).`,
    { meta: { retry_after: String(retryAfter), limit: String(state.limit), remaining: String(state.remaining), reset: String(retryAfter) } },
  );
}

/**
 * An idempotency key that already belongs to another request (another operation, other
 * parameters or other audio): refused before anything is priced or held. It names neither the
 * other request nor what it cost.
 */
export function keyReused(existing: ReservationRecord, op: string): MurmurError {
  const other = existing.operation === op ? 'another request' : `a ${existing.operation} request`;
  return new MurmurError(
    'idempotency_conflict',
    `This idempotency key was already used for ${other} with other parameters; a key replays only the request it was first sent with. Use a new key for a new request.`,
    { param: 'idempotency_key' },
  );
}

/** One answer for an unknown reservation and another user's: which ids exist is not disclosed. */
export function reservationNotFound(): MurmurError {
  return new MurmurError('not_found', 'No such reservation. Pass the id Reserve returned, with the same user_id.', { param: 'reservation_id' });
}

/** A released or expired reservation cannot be `verb`ed: its credits are back already. */
export function notHeldError(r: ReservationRecord, verb: string): MurmurError {
  const what = r.state === 'expired' ? `its hold expired at ${r.expiresAt.toISOString()}` : 'it was released';
  return new MurmurError('invalid_request', `Reservation ${r.id} cannot be ${verb}: ${what}, and its credits were returned. Reserve again.`, {
    param: 'reservation_id',
  });
}

/** An admission Reserve cannot use, and the two ways out. */
export function badAdmission(why: string): MurmurError {
  return new MurmurError('invalid_request', `admission_id ${why} Call AdmitAiRequest for a new one, or pass '' to have Reserve admit the call.`, {
    param: 'admission_id',
  });
}

/** The ledger note's tail when settling a hold of an earlier period let monthly credits lapse. */
export function lapsedNote(lapsed: number, r: ReservationRecord): string {
  return lapsed > 0 ? `; ${plural(lapsed, 'monthly credit')} of period ${periodLabel(r.periodStart)} not returned (lapsed with that period)` : '';
}
