/**
 * Decoding only what is paid for. A transcription holds credits before its audio is decoded, and
 * the hold says how many seconds of audio it pays for (Reservation.audio_seconds_covered). As
 * ffmpeg's PCM arrives, {@link PaidAudio.cover} checks the decoded length against that: past it,
 * decoding waits while billing extends the hold (ExtendReservation, asking for twice as much when
 * the balance allows, so a two-hour file needs a handful of extensions), and stops at once when
 * billing refuses — insufficient_tokens or spending_cap_reached, with the hold then released by
 * the caller. So the work done before anyone has paid is at most one block of PCM past the hold,
 * whatever the file's header claims (a patched Matroska duration, a FLAC of 12 hours of silence).
 *
 * The committed price is the decoded length's (Commit with audio_seconds), never the hold's.
 */
import { MurmurError, type PromiseClient } from '@murmur/kit';
import { billing } from '@murmur/proto';
import { BYTES_PER_SECOND } from './pcm';

/** The billing RPC this needs. */
export type ExtendPort = Pick<PromiseClient<billing.BillingServiceClient>, 'extendReservation'>;

/** The audio a reservation's first hold asks to pay for when the length is not known yet: one priced minute. */
export const FIRST_HOLD_SECONDS = 60;

export class PaidAudio {
  private covered: number;
  private held: number | undefined;
  private extending: Promise<void> | undefined;

  /**
   * `coveredSeconds`: what the hold pays for now (Reservation.audio_seconds_covered); `maxSeconds`:
   * the longest audio accepted, so an extension never asks for more than could ever be decoded.
   */
  constructor(
    private readonly billing: ExtendPort,
    private readonly hold: { userId: string; reservationId: string },
    coveredSeconds: number,
    private readonly maxSeconds: number,
  ) {
    this.covered = coveredSeconds;
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
   * billing extended the hold, or rejects with billing's refusal.
   */
  cover(decodedBytes: number): Promise<void> | undefined {
    const seconds = decodedBytes / BYTES_PER_SECOND;
    if (seconds <= this.covered) return undefined;
    this.extending ??= this.extend(seconds).finally(() => {
      this.extending = undefined;
    });
    const pending = this.extending;
    return pending.then(() => this.cover(decodedBytes));
  }

  private async extend(seconds: number): Promise<void> {
    const want = Math.min(this.maxSeconds, Math.max(2 * this.covered, seconds + FIRST_HOLD_SECONDS));
    let reservation: billing.Reservation | undefined;
    try {
      ({ reservation } = await this.billing.extendReservation({ ...this.hold, audioSeconds: seconds, maxAudioSeconds: want }));
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
    this.covered = reservation.audioSecondsCovered;
    this.held = reservation.credits;
  }
}
