/**
 * The credits of one live stream. At open, billing holds the price of the first minute
 * (insufficient_tokens or spending_cap_reached before any audio is read); the hold is a lease
 * renewed while the stream lives (a killed replica's hold returns by itself), and it is extended
 * a minute at a time while {@link LIVE_HOLD_AHEAD_SECONDS} of paid audio remain, so a stream never
 * waits for billing. When billing refuses an extension, the stream may go on only to the last
 * second paid for: {@link LiveHold.paysFor} says so, and the session ends there. At the end the
 * seconds received are committed (priced as any transcription); a stream that ends with nothing to
 * charge releases its hold.
 */
import { MurmurError } from '@murmur/contract';
import { keepReservationHeld, type HoldLease, type Logger } from '@murmur/kit';
import { billing } from '@murmur/proto';
import { FIRST_HOLD_SECONDS } from '../paid-audio';
import type { BillingPort } from '../service';

/** The hold is extended while fewer than this many paid seconds are left. */
export const LIVE_HOLD_AHEAD_SECONDS = 20;

export class LiveHold {
  private covered: number;
  private extending: Promise<void> | undefined;
  /** Billing's refusal of the last extension: the stream ends at {@link covered}. */
  refusal: MurmurError | undefined;
  private settled = false;

  private constructor(
    private readonly billing: BillingPort,
    private readonly userId: string,
    private readonly reservation: billing.Reservation,
    private readonly lease: HoldLease,
    private readonly maxSeconds: number,
    private readonly log: Logger,
  ) {
    this.covered = reservation.audioSecondsCovered;
  }

  /** Holds the first minute of the stream `id`; billing's refusals pass through. */
  static async open(
    port: BillingPort,
    o: { userId: string; id: string; admissionId: string; leaseSeconds: number; maxSeconds: number; log: Logger },
  ): Promise<LiveHold> {
    const { reservation } = await port.reserve({
      userId: o.userId,
      operation: billing.Operation.OPERATION_TRANSCRIBE,
      credits: 0,
      idempotencyKey: o.id,
      admissionId: o.admissionId,
      audioSeconds: FIRST_HOLD_SECONDS,
      transcriptChars: 0,
      holdSeconds: o.leaseSeconds,
      // Each stream is its own request: its id is all its result depends on.
      requestFingerprint: `live/1:${o.id}`,
    });
    if (!reservation) throw new Error('billing answered Reserve without a reservation');
    const lease = keepReservationHeld(port, { userId: o.userId, reservationId: reservation.id }, { leaseSeconds: o.leaseSeconds, log: o.log });
    return new LiveHold(port, o.userId, reservation, lease, o.maxSeconds, o.log);
  }

  /** Aborted when the hold lapsed (billing unreachable for a whole lease). */
  get lapsed(): AbortSignal {
    return this.lease.signal;
  }

  /** Seconds of audio the hold pays for now. */
  get coveredSeconds(): number {
    return this.covered;
  }

  /**
   * Whether `seconds` of audio are paid for; asks billing for another minute ahead of need
   * (in the background) while fewer than {@link LIVE_HOLD_AHEAD_SECONDS} remain.
   */
  paysFor(seconds: number): boolean {
    if (!this.refusal && !this.extending && seconds + LIVE_HOLD_AHEAD_SECONDS > this.covered && this.covered < this.maxSeconds) {
      this.extending = this.extend(seconds).finally(() => {
        this.extending = undefined;
      });
    }
    return seconds <= this.covered;
  }

  /** Settles the extension in flight, if any (the end of a stream waits for it before charging). */
  async idle(): Promise<void> {
    await this.extending;
  }

  private async extend(seconds: number): Promise<void> {
    const want = Math.min(this.maxSeconds, this.covered + FIRST_HOLD_SECONDS);
    try {
      const { reservation } = await this.billing.extendReservation({ userId: this.userId, reservationId: this.reservation.id, audioSeconds: Math.max(seconds, want), maxAudioSeconds: want });
      if (reservation?.state === billing.ReservationState.RESERVATION_STATE_HELD) this.covered = Math.max(this.covered, reservation.audioSecondsCovered);
    } catch (err) {
      if (err instanceof MurmurError && (err.code === 'insufficient_tokens' || err.code === 'spending_cap_reached')) {
        const minutes = Math.round(this.covered / 60);
        this.refusal = new MurmurError(
          err.code,
          `Your AI Credits pay for no more of this stream: it ended after ${minutes} minute${minutes === 1 ? '' : 's'}, with every word before that final and charged. ${err.message}`,
        );
        return;
      }
      // Billing restarting: the next block asks again; the lease keeps what is held.
      this.log.warn({ reservation_id: this.reservation.id, err: err instanceof Error ? err.message : String(err) }, 'live hold extension failed; retrying');
    }
  }

  /** Charges `seconds` of audio (releases the hold when there are none); answers the credits charged. */
  async settle(seconds: number, reason: string): Promise<number> {
    if (this.settled) return 0;
    this.settled = true;
    await this.idle();
    this.lease.stop();
    if (seconds <= 0) {
      await this.release(reason);
      return 0;
    }
    const { reservation } = await this.billing.commit({
      userId: this.userId,
      reservationId: this.reservation.id,
      credits: 0,
      usageSeconds: Math.ceil(seconds),
      audioSeconds: Math.min(seconds, this.covered),
    });
    return reservation?.credits ?? 0;
  }

  /** Returns the held credits (best effort: billing expires the hold by itself otherwise). */
  async release(reason: string): Promise<void> {
    this.settled = true;
    this.lease.stop();
    try {
      await this.billing.release({ userId: this.userId, reservationId: this.reservation.id, reason });
    } catch (err) {
      this.log.error({ reservation_id: this.reservation.id, reason, err: err instanceof Error ? err.message : String(err) }, 'live hold release failed');
    }
  }
}
