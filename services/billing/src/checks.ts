/** The input checks every part of the billing domain makes; each throws invalid_request naming its field. */
import { MurmurError, requireId } from '@murmur/contract';
import { MAX_NOTE_LENGTH } from './limits';

/** Every RPC names its user: a malformed id is the caller's mistake, never a missing account. */
export function checkUserId(userId: string): void {
  requireId('usr', userId, 'user_id');
}

/** A note or reason ends up on a ledger row, whose length is bounded. */
export function checkNote(note: string, param: 'note' | 'reason' = 'note'): void {
  if (note.length > MAX_NOTE_LENGTH) {
    throw new MurmurError('invalid_request', `${param} must be at most ${MAX_NOTE_LENGTH} characters.`, { param });
  }
}
