import { createHash } from 'node:crypto';
import { MurmurError } from '@murmur/contract';
import { CursorCodec } from '@murmur/kit';
import { cursorPayload, filterDigest, isCursorPayload, PageCursors } from '../src/keyset-paging';

const SECRET = 'unit-test-cursor-secret-0123';
const REC_A = 'rec_0123456789abcdefghijklmn';
const REC_B = 'rec_abcdefghijklmn0123456789';

function errorOf(fn: () => unknown): MurmurError {
  try {
    fn();
  } catch (err) {
    if (err instanceof MurmurError) return err;
    throw err;
  }
  throw new Error('expected a MurmurError');
}

describe('filterDigest', () => {
  it('is stable for equal filters and differs for different ones', () => {
    expect(filterDigest(['milk', undefined, 1, undefined])).toBe(filterDigest(['milk', undefined, 1, undefined]));
    expect(filterDigest(['milk', undefined])).not.toBe(filterDigest([undefined, 'milk']));
    expect(filterDigest(['milk'])).not.toBe(filterDigest(['milk ']));
    expect(filterDigest([])).not.toBe(filterDigest([undefined]));
  });

  it('digests an unfiltered list as it always has, so its cursors stay valid', () => {
    const sha = (canonical: string) => createHash('sha256').update(canonical).digest('base64url').slice(0, 12);
    for (let i = 0; i < 2; i++) {
      // Twice: the second answer is the remembered one.
      expect(filterDigest([undefined, undefined, undefined, undefined])).toBe(sha('[null,null,null,null]'));
      expect(filterDigest([undefined])).toBe(sha('[null]'));
      expect(filterDigest(['milk', undefined])).toBe(sha('["milk",null]'));
    }
  });
});

describe('cursor payloads', () => {
  const at = new Date('2026-01-15T12:00:00.123Z');

  it('round-trips the position to the millisecond', () => {
    const payload = cursorPayload('recordings', { createdAt: at, id: REC_A }, 'f');
    expect(payload).toEqual({ v: 1, l: 'recordings', t: at.getTime(), i: REC_A, f: 'f' });
    expect(isCursorPayload(JSON.parse(JSON.stringify(payload)))).toBe(true);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'x'],
    ['another version', { v: 2, l: 'recordings', t: 1, i: REC_A, f: '' }],
    ['an unknown list', { v: 1, l: 'users', t: 1, i: 'usr_0123456789abcdefghijklmn', f: '' }],
    ['a time that is not a whole number', { v: 1, l: 'recordings', t: 1.5, i: REC_A, f: '' }],
    ['a time as a string', { v: 1, l: 'recordings', t: '1', i: REC_A, f: '' }],
    ['an id of another kind', { v: 1, l: 'folders', t: 1, i: REC_A, f: '' }],
    ['a malformed id', { v: 1, l: 'recordings', t: 1, i: "rec_' OR 1=1", f: '' }],
    ['no filter digest', { v: 1, l: 'recordings', t: 1, i: REC_A }],
  ])('rejects a payload with %s', (_name, value) => {
    expect(isCursorPayload(value)).toBe(false);
  });
});

describe('PageCursors', () => {
  const cursors = new PageCursors(SECRET);
  const OWNER = 'usr_0123456789abcdefghijklmn';
  const OTHER = 'usr_nmlkjihgfedcba9876543210';
  const rows = [
    { createdAt: new Date('2026-01-03T00:00:00Z'), id: REC_B },
    { createdAt: new Date('2026-01-02T00:00:00Z'), id: REC_A },
    { createdAt: new Date('2026-01-01T00:00:00Z'), id: REC_A },
  ];

  it('serves `limit` rows and a cursor after the last one when one more row came back', () => {
    const page = cursors.page(OWNER, 'recordings', rows, 2, 'f1');
    expect(page.rows).toEqual(rows.slice(0, 2));
    expect(page.hasMore).toBe(true);
    expect(cursors.positionOf(OWNER, 'recordings', page.nextCursor, 'f1')).toEqual({ createdAt: rows[1]!.createdAt, id: REC_A });
  });

  it('has no cursor on the last page', () => {
    expect(cursors.page(OWNER, 'recordings', rows, 3, 'f1')).toEqual({ rows, hasMore: false, nextCursor: '' });
  });

  it('treats an empty cursor as the first page', () => {
    expect(cursors.positionOf(OWNER, 'recordings', '', 'f1')).toBeUndefined();
  });

  it.each<[string, string]>([
    ['garbage', 'not-a-cursor'],
    ['two dots', 'a.b.c'],
    ['a cursor signed with another secret', new CursorCodec('another-secret-0123456789').encode(cursorPayload('recordings', rows[0]!, 'f1'), OWNER)],
    ['a well-signed cursor bound to no owner', new CursorCodec(SECRET).encode(cursorPayload('recordings', rows[0]!, 'f1'))],
    ['a well-signed payload of the wrong shape', new CursorCodec(SECRET).encode({ hello: 'world' }, OWNER)],
  ])('rejects %s', (_name, cursor) => {
    expect(errorOf(() => cursors.positionOf(OWNER, 'recordings', cursor, 'f1'))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
  });

  it('rejects a cursor of another list or other filters', () => {
    const cursor = cursors.page(OWNER, 'recordings', rows, 1, 'f1').nextCursor;
    expect(errorOf(() => cursors.positionOf(OWNER, 'folders', cursor, 'f1'))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
    expect(errorOf(() => cursors.positionOf(OWNER, 'recordings', cursor, 'f2'))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
  });

  it('rejects a cursor issued to another owner, and says nothing of that owner', () => {
    const cursor = cursors.page(OWNER, 'recordings', rows, 1, 'f1').nextCursor;
    expect(errorOf(() => cursors.positionOf(OTHER, 'recordings', cursor, 'f1'))).toMatchObject({ code: 'invalid_request', param: 'cursor' });
    expect(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()).not.toContain(OWNER);
    expect(cursors.positionOf(OWNER, 'recordings', cursor, 'f1')).toEqual({ createdAt: rows[0]!.createdAt, id: REC_B });
  });
});
