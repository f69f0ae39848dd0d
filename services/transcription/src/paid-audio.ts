/**
 * Decoding only what is paid for. A transcription's credits are held before its audio is decoded
 * past the first block, and the hold says how many seconds of audio it pays for
 * (Reservation.audio_seconds_covered). As ffmpeg's PCM arrives, {@link PaidAudio.cover} checks the
 * decoded length against that: past it, decoding waits while billing extends the hold
 * (ExtendReservation, asking for twice as much when the balance allows, so a two-hour file needs
 * a handful of extensions), and stops at once when billing refuses — insufficient_tokens or
 * spending_cap_reached, with the hold then released by the caller. So the work done before anyone
 * has paid is at most one block of PCM past the hold, whatever the file's header claims (a
 * patched Matroska duration, a FLAC of 12 hours of silence).
 *
 * A synchronous call opens its hold with the first block of PCM ({@link PaidAudio.opening}): a file
 * ffmpeg cannot decode at all is refused (unsupported_audio) with nothing reserved. A job holds
 * from its submission ({@link PaidAudio.holding}).
 *
 * The committed price is the decoded length's (Commit with audio_seconds), never the hold's.
 */
import { MurmurError } from '@murmur/contract';
import { type PromiseClient } from '@murmur/kit';
import { billing } from '@murmur/proto';
import { BYTES_PER_SECOND } from './pcm';

/** The billing RPC this needs. */
export type ExtendPort = Pick<PromiseClient<billing.BillingServiceClient>, 'extendReservation'>;

/** The audio a reservation's first hold asks to pay for when the length is not known yet: one priced minute. */
export const FIRST_HOLD_SECONDS = 60;

export class PaidAudio {
  private reservationId: string | undefined;
  private covered = 0;
  private held: number | undefined;
  private pending: Promise<void> | undefined;

  private constructor(
    private readonly billing: ExtendPort,
    private readonly userId: string,
    private readonly maxSeconds: number,
    private readonly open: (() => Promise<billing.Reservation>) | undefined,
  ) {}

  /** A hold made when the first PCM arrives, by `open` (billing's Reserve, whose refusals pass through). */
  static opening(billing: ExtendPort, userId: string, maxSeconds: number, open: () => Promise<billing.Reservation>): PaidAudio {
    return new PaidAudio(billing, userId, maxSeconds, open);
  }

  /** A hold that exists already (a job's): `reservation` as billing last answered it. */
  static holding(billing: ExtendPort, userId: string, maxSeconds: number, reservation: billing.Reservation): PaidAudio {
    const paid = new PaidAudio(billing, userId, maxSeconds, undefined);
    paid.take(reservation);
    return paid;
  }

  /** Credits the hold holds after the last extension; undefined while it was never extended. */
  get creditsHeld(): number | undefined {
    return this.held;
  }

  /** Seconds of audio the hold pays for now. */
  get coveredSeconds(): number {
    return this.covered;
  }

  /**
   * Called with the PCM bytes decoded so far: nothing to wait for while the hold covers them
   * (undefined, so the decoder does not yield per block); otherwise a promise that settles once
   * billing made or extended the hold, or rejects with billing's refusal.
   */
  cover(decodedBytes: number): Promise<void> | undefined {
    const seconds = decodedBytes / BYTES_PER_SECOND;
    if (this.reservationId !== undefined && seconds <= this.covered) return undefined;
    this.pending ??= (this.reservationId === undefined ? this.first() : this.extend(seconds)).finally(() => {
      this.pending = undefined;
    });
    return this.pending.then(() => this.cover(decodedBytes));
  }

  private take(reservation: billing.Reservation): void {
    this.reservationId = reservation.id;
    this.covered = reservation.audioSecondsCovered;
  }

  private async first(): Promise<void> {
    if (!this.open) throw new Error('PaidAudio without a hold or a way to open one');
    this.take(await this.open());
  }

  private async extend(seconds: number): Promise<void> {
    const want = Math.min(this.maxSeconds, Math.max(2 * this.covered, seconds + FIRST_HOLD_SECONDS));
    let reservation: billing.Reservation | undefined;
    try {
      ({ reservation } = await this.billing.extendReservation({ userId: this.userId, reservationId: this.reservationId!, audioSeconds: seconds, maxAudioSeconds: want }));
    } catch (err) {
      if (err instanceof MurmurError && (err.code === 'insufficient_tokens' || err.code === 'spending_cap_reached')) {
        const minutes = Math.floor(this.covered / 60);
        throw new MurmurError(
          err.code,
          `The audio runs longer than your AI Credits pay for (decoding stopped after ${minutes} minute${minutes === 1 ? '' : 's'}); nothing was charged. ${err.message}`,
          { param: 'audio' },
        );
      }
      throw err;
    }
    if (reservation?.state !== billing.ReservationState.RESERVATION_STATE_HELD) {
      throw new MurmurError('service_unavailable', 'The credits of this call were no longer held (the hold lapsed); nothing was charged. Retry in a few seconds.');
    }
    if (reservation.audioSecondsCovered < seconds) throw new Error(`billing extended the hold to ${reservation.audioSecondsCovered} s, not the ${seconds} s asked for`);
    this.take(reservation);
    this.held = reservation.credits;
  }
}
