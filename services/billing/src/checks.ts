/** The input checks every part of the billing domain makes; each throws invalid_request naming its field. */
import { isId, MurmurError } from '@murmur/contract';
import { DEFAULT_PAGE_SIZE, MAX_NOTE_LENGTH, MAX_PAGE_SIZE } from './limits';

/** Every RPC names its user: a malformed id is the caller's mistake, never a missing account. */
export function checkUserId(userId: string): void {
  if (!isId('usr', userId)) {
    throw new MurmurError('invalid_request', 'user_id must be a user id of the form usr_….', { param: 'user_id' });
  }
}

/** A note or reason ends up on a ledger row, whose length is bounded. */
export function checkNote(note: string, param: 'note' | 'reason' = 'note'): void {
  if (note.length > MAX_NOTE_LENGTH) {
    throw new MurmurError('invalid_request', `${param} must be at most ${MAX_NOTE_LENGTH} characters.`, { param });
  }
}

/**
 * How many rows a list answers (a ledger page, recent charges): 0 means the default, 1 to the
 * maximum as asked, anything else is the caller's mistake. One rule for every list of billing.
 */
export function checkPageSize(size: number, param: 'page_size' | 'recent_limit'): number {
  if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) {
    throw new MurmurError('invalid_request', `${param} must be from 1 to ${MAX_PAGE_SIZE} (0 means ${DEFAULT_PAGE_SIZE}).`, { param });
  }
  return size === 0 ? DEFAULT_PAGE_SIZE : size;
}
