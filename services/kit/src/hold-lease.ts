/**
 * A billing reservation held as a lease: the AI service that reserved credits asks for a short
 * hold (MURMUR_HOLD_LEASE_SECONDS) and renews it every third of that while its work runs. A
 * process killed mid-call stops renewing, and billing returns the credits one lease later —
 * correct with any number of replicas, since no replica ever releases another's holds, and
 * with no restart needed at all. docs/decisions/0014-credit-holds-are-leases.md says why.
 */
import { billing } from '@murmur/proto';
import { z } from './config';
import { MurmurError } from '@murmur/contract';
import type { PromiseClient } from './grpc-client';
import type { Logger } from './log';

/** Default lease of a hold: a dead holder's credits come back within this (plus one sweep at most). */
export const DEFAULT_HOLD_LEASE_SECONDS = 30;

/** The variable of every process that reserves credits (transcription, conversion). */
export const holdLeaseSchema = {
  /** Seconds a reservation is held without a renewal; renewed every third of it while the work runs. */
  MURMUR_HOLD_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(DEFAULT_HOLD_LEASE_SECONDS),
};

/** The one billing RPC a lease needs. */
export type RenewPort = Pick<PromiseClient<billing.BillingServiceClient>, 'renewReservation'>;

/** A running lease; stop it once the reservation is committed or released. */
export interface HoldLease {
  /** Aborted (with service_unavailable) when billing says the hold was released or expired: the work can no longer be charged. */
  readonly signal: AbortSignal;
  /** True once the hold was found gone. */
  readonly lost: boolean;
  stop(): void;
}

/** The error of work whose hold lapsed (billing unreachable for a whole lease): nothing is charged. */
export function holdLapsedError(): MurmurError {
  return new MurmurError('service_unavailable', 'Billing could not be reached to keep the credits of this call held; nothing was charged. Retry in a few seconds.');
}

/**
 * Renews `reservationId` every `leaseSeconds / 3` until stopped. A renewal that fails (billing
 * restarting) is retried at the next tick; only billing answering that the reservation is no
 * longer held ends the lease, aborting {@link HoldLease.signal}.
 */
export function keepReservationHeld(
  client: RenewPort,
  hold: { userId: string; reservationId: string },
  opts: { leaseSeconds: number; log: Logger },
): HoldLease {
  const controller = new AbortController();
  let inFlight = false;
  let stopped = false;
  const tick = () => {
    if (inFlight || stopped) return;
    inFlight = true;
    client
      .renewReservation({ ...hold, holdSeconds: opts.leaseSeconds })
      .then(({ reservation }) => {
        if (stopped || reservation?.state === billing.ReservationState.RESERVATION_STATE_HELD) return;
        // Committed already (an idempotent replay of a settled call): nothing left to keep held.
        if (reservation?.state === billing.ReservationState.RESERVATION_STATE_COMMITTED) return stop();
        opts.log.warn({ reservation_id: hold.reservationId, state: reservation?.state }, 'credit hold lapsed while the work ran');
        controller.abort(holdLapsedError());
        stop();
      })
      .catch((err: unknown) => {
        opts.log.warn({ reservation_id: hold.reservationId, err: err instanceof Error ? err.message : String(err) }, 'hold renewal failed; retrying');
      })
      .finally(() => {
        inFlight = false;
      });
  };
  const timer = setInterval(tick, Math.max(100, Math.floor((opts.leaseSeconds * 1000) / 3)));
  timer.unref();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return {
    signal: controller.signal,
    get lost() {
      return controller.signal.aborted;
    },
    stop,
  };
}
