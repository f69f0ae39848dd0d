/**
 * A user's ledger, page by page, newest first: keyset paging behind a signed page token that
 * only its owner can pass back. Throws MurmurError only; knows no gRPC and no SQL.
 */
import { MurmurError, pageSizeOf } from '@murmur/contract';
import { type CursorCodec } from '@murmur/kit';
import { checkUserId } from './checks';
import type { AccountLifecycle } from './lifecycle';
import type { BillingStore, LedgerEntryRecord, LedgerPosition } from './store';

/** One page of a user's ledger; `nextPageToken` is empty on the last page. */
export interface LedgerPage {
  entries: LedgerEntryRecord[];
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

/** See the module comment. */
export class Ledger {
  constructor(private readonly store: BillingStore, private readonly lifecycle: AccountLifecycle, private readonly cursors: CursorCodec) {}

  /** One page of the user's ledger, newest first. */
  async listLedgerEntries(userId: string, pageSize: number, pageToken: string): Promise<LedgerPage> {
    checkUserId(userId);
    const limit = pageSizeOf(pageSize, 'page_size', { zeroMeansDefault: true });
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
    await this.lifecycle.current(userId);
    const rows = await this.store.listLedgerEntries(userId, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextPageToken =
      rows.length > limit && last ? this.cursors.encode({ u: userId, t: last.createdAt.getTime(), s: last.seq } satisfies LedgerCursor) : '';
    return { entries: page, nextPageToken };
  }
}
