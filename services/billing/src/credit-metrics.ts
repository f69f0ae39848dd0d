/**
 * Credits as operators see them (decision 0041): counters of credits reserved (a reserve, or an
 * extension of a transcription's hold), committed (charged) and released (returned by the holder),
 * by operation (`transcribe`, `convert`), counted once the account's transaction committed. A
 * replay of the same request counts nothing again. Holds that lapsed are not in `released`: the
 * difference reserved − committed − released is what is held now or expired.
 */
import { counterChildren, defineCounter } from '@murmur/kit';
import type { OperationName } from './store';

const reserved = counterChildren(defineCounter('murmur_billing_credits_reserved_total', 'AI Credits held by reservations (and extensions of a hold), by operation.', ['operation']), 1);
const committed = counterChildren(defineCounter('murmur_billing_credits_committed_total', 'AI Credits charged by committed reservations, by operation.', ['operation']), 1);
const released = counterChildren(defineCounter('murmur_billing_credits_released_total', 'AI Credits returned by released reservations, by operation.', ['operation']), 1);

/** What one charging step did to credits, counted after its transaction committed. */
export type CreditMovement = { kind: 'reserved' | 'committed' | 'released'; operation: OperationName; credits: number };

const COUNTERS = { reserved, committed, released };

/** Counts `movement`, when there is one (a replay or no-op has none). */
export function countCredits(movement: CreditMovement | undefined): void {
  if (movement && movement.credits > 0) COUNTERS[movement.kind].get(movement.operation).inc(movement.credits);
}
