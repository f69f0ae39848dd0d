/**
 * Keyset paging shared by every list RPC of every service (the library's lists, transcription jobs, webhook deliveries): lists run newest first on (created_at DESC, id DESC),
 * and a cursor is the signed (created_at, id) of the last row served. Because the position is
 * a value, not an offset, rows inserted between page fetches never cause a duplicate or a gap.
 *
 * A cursor is bound to its owner, its list and the filters it was issued with: another user's
 * cursor, or one reused on another list or with another `query`/`folder_id`/date range, is
 * invalid_request (param "cursor") rather than a silently different walk. The owner binding is
 * signed, not written into the cursor, so a cursor does not reveal whose list it walks.
 */
import { createHash } from 'node:crypto';
import { CursorCodec } from './cursor';
import { isId, MurmurError, REQUEST_ID_PATTERN } from '@murmur/contract';

/** The lists that page, each with the id prefix of its rows. */
export const LIST_ID_PREFIX = {
  recordings: 'rec',
  thought_threads: 'thr',
  folders: 'fld',
  knowledge_bases: 'kb',
  transcriptions: 'trn',
  requests: 'req',
  webhook_deliveries: 'msg',
} as const;

/** A list RPC, as named inside cursors. */
export type ListName = keyof typeof LIST_ID_PREFIX;

/** Where a page ends: the last row served. The next page starts strictly after it. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

/** What a cursor carries (kept short: it travels in URLs). */
export interface CursorPayload extends Record<string, unknown> {
  /** version */
  v: 1;
  /** list name */
  l: ListName;
  /** created_at of the last row, epoch milliseconds */
  t: number;
  /** id of the last row */
  i: string;
  /** digest of the filters the cursor was issued with */
  f: string;
}

/** A short, stable digest of a list's filters; the empty filter set has a digest too. */
export function filterDigest(filters: ReadonlyArray<string | number | undefined>): string {
  if (!filters.every((f) => f === undefined)) return digestOf(filters);
  // Most pages are unfiltered: that digest depends only on how many filters the list has.
  let digest = UNFILTERED.get(filters.length);
  if (digest === undefined) UNFILTERED.set(filters.length, (digest = digestOf(filters)));
  return digest;
}

const UNFILTERED = new Map<number, string>();

function digestOf(filters: ReadonlyArray<string | number | undefined>): string {
  const canonical = JSON.stringify(filters.map((f) => (f === undefined ? null : f)));
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 12);
}

/** The payload of a cursor pointing after `position` in `list`. */
export function cursorPayload(list: ListName, position: PagePosition, filters: string): CursorPayload {
  return { v: 1, l: list, t: position.createdAt.getTime(), i: position.id, f: filters };
}

/** Shape check of a decoded payload (the signature already proved we issued it). */
export function isCursorPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    p.v === 1 &&
    typeof p.l === 'string' &&
    Object.prototype.hasOwnProperty.call(LIST_ID_PREFIX, p.l) &&
    typeof p.t === 'number' &&
    Number.isSafeInteger(p.t) &&
    typeof p.i === 'string' &&
    // Request ids may be the caller's own X-Request-Id (any req_… of the contract's pattern).
    (p.l === 'requests' ? REQUEST_ID_PATTERN.test(p.i) : isId(LIST_ID_PREFIX[p.l as ListName], p.i)) &&
    typeof p.f === 'string'
  );
}

/** One page of rows plus what the response says about the next one. */
export interface Page<T> {
  rows: T[];
  hasMore: boolean;
  nextCursor: string;
}

/** Signs and checks the cursors of every list of the service. */
export class PageCursors {
  private readonly codec: CursorCodec;

  constructor(secret: string) {
    this.codec = new CursorCodec(secret);
  }

  /**
   * The position a request's cursor points after, or undefined for a first page. Throws
   * invalid_request (param "cursor") for anything we did not issue to this owner for this list and filters.
   */
  positionOf(ownerId: string, list: ListName, cursor: string | undefined, filters: string): PagePosition | undefined {
    if (!cursor) return undefined;
    const payload = this.codec.decode(cursor, isCursorPayload, ownerId);
    if (payload.l !== list) {
      throw new MurmurError('invalid_request', 'The cursor belongs to another list. Pass `next_cursor` from a previous page of this list.', { param: 'cursor' });
    }
    if (payload.f !== filters) {
      throw new MurmurError(
        'invalid_request',
        'The cursor was issued for other filters. Repeat the filters of the first page unchanged, or start again without a cursor.',
        { param: 'cursor' },
      );
    }
    return { createdAt: new Date(payload.t), id: payload.i };
  }

  /**
   * Cuts `rows` (fetched with `limit + 1` to learn whether more follow) to one page, with a
   * cursor after its last row when more follow.
   */
  page<T extends PagePosition>(ownerId: string, list: ListName, rows: T[], limit: number, filters: string): Page<T> {
    const hasMore = rows.length > limit;
    const served = hasMore ? rows.slice(0, limit) : rows;
    const last = served[served.length - 1];
    const nextCursor = hasMore && last ? this.codec.encode(cursorPayload(list, last, filters), ownerId) : '';
    return { rows: served, hasMore, nextCursor };
  }
}
