/**
 * The request log's store (issue 36, docs/request-log.md): RecordRequests and ListRequests over
 * gRPC, on real Postgres and the embedded PGlite — batches, skipped entries, filters, paging,
 * owner isolation, and the day partitions made ahead and dropped past the 30 days kept.
 */
import { auth } from '@murmur/proto';
import type { Database } from '@murmur/kit';
import { openTestDatabase } from '@murmur/kit/testing';
import { AUTH_MIGRATIONS_DIR } from '@murmur/auth';
import { REQUEST_LOG_RETENTION_DAYS } from '@murmur/contract';
import { RequestLog } from '../src/request-log';
import { failure, startHarness, uniqueEmail, type Harness } from './support';

const DAY = 86_400_000;
const T0 = '2026-01-15T12:00:00.000Z';
const BACKENDS: Array<[string, string]> = process.env.DATABASE_URL ? [['postgres', process.env.DATABASE_URL], ['pglite', '']] : [['pglite', '']];

let serial = 0;
function entry(ownerId: string, keyId: string, over: Partial<auth.RequestLogEntry> = {}): auth.RequestLogEntry {
  serial += 1;
  return {
    requestId: `req_${serial.toString(16).padStart(24, '0')}`,
    ownerId,
    createdAt: new Date(new Date(T0).getTime() - serial * 1000),
    method: 'GET',
    route: '/api/v1/recordings',
    tool: '',
    status: 200,
    errorCode: '',
    latencyUs: 1500,
    keyId,
    clientId: '',
    traceId: '',
    bytesIn: 0,
    bytesOut: 321,
    creditsCharged: 0,
    keyHint: '',
    ...over,
  };
}

describe.each(BACKENDS)('the request log on %s', (_name, url) => {
  let db: Database;
  let h: Harness;
  let owner: { userId: string; keyId: string; hint: string };
  let other: { userId: string; keyId: string };
  const make = async () => {
    const { user } = await h.client.createUser({ email: uniqueEmail('log'), name: 'Ada' });
    const { apiKey } = await h.client.createApiKey({ userId: user!.id, name: 'k', expiry: auth.KeyExpiry.KEY_EXPIRY_NEVER, scopes: [] });
    return { userId: user!.id, keyId: apiKey!.id, hint: apiKey!.hint };
  };

  beforeAll(async () => {
    db = await openTestDatabase('auth', AUTH_MIGRATIONS_DIR, url || undefined);
    h = await startHarness(db);
    owner = await make();
    other = await make();
  });
  afterAll(async () => {
    await h.stop();
    await db.close();
  });
  beforeEach(() => h.clock.set(T0));

  const partitions = async () =>
    (
      await db.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace WHERE p.relname = 'request_log' AND n.nspname = current_schema() ORDER BY 1`,
      )
    ).map((r) => r.name);

  it('has today’s partition and the next two days’ from the start', async () => {
    expect(await partitions()).toEqual(expect.arrayContaining(['request_log_20260115', 'request_log_20260116', 'request_log_20260117']));
  });

  it('stores a batch, skipping (and counting) what cannot be an entry, and reads it back newest first with the key’s hint', async () => {
    const good = [entry(owner.userId, owner.keyId, { status: 201, creditsCharged: 3, bytesIn: 77, traceId: 'a'.repeat(32) }), entry(owner.userId, owner.keyId)];
    const bad = [
      entry('not-a-user', owner.keyId),
      entry(owner.userId, owner.keyId, { status: 42 }),
      entry(owner.userId, owner.keyId, { route: 'no-slash' }),
      entry(owner.userId, owner.keyId, { createdAt: new Date(new Date(T0).getTime() - (REQUEST_LOG_RETENTION_DAYS + 1) * DAY) }),
    ];
    const res = await h.client.recordRequests({ entries: [...good, ...bad] });
    expect(res).toEqual({ stored: 2, skipped: 4 });
    // The same batch again (a retry after a lost answer) is stored once.
    expect(await h.client.recordRequests({ entries: good })).toEqual({ stored: 0, skipped: 0 });
    const page = await h.client.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: owner.userId, limit: 10, cursor: '', keyId: '' }));
    const mine = page.entries.filter((e) => good.some((g) => g.requestId === e.requestId));
    expect(mine.map((e) => e.requestId)).toEqual(good.map((g) => g.requestId));
    expect(mine[0]).toEqual({ ...good[0], keyHint: owner.hint });
  });

  it('filters by status class or exact status, route, tool, key and time, and pages without gaps or repeats', async () => {
    const me = await make();
    const mark = new Date(new Date(T0).getTime() - 10_000_000);
    const batch = [
      entry(me.userId, me.keyId, { status: 404, errorCode: 'not_found', createdAt: new Date(mark.getTime() + 1) }),
      entry(me.userId, me.keyId, { status: 429, errorCode: 'rate_limit_exceeded', route: '/api/v1/convert', method: 'POST', createdAt: new Date(mark.getTime() + 2) }),
      entry(me.userId, 'con_0123456789abcdefghijklmn', { route: '/mcp', method: 'POST', tool: 'get_usage', clientId: 'client-1', createdAt: new Date(mark.getTime() + 3) }),
      entry(me.userId, me.keyId, { status: 502, errorCode: 'conversion_failed', route: '/api/v1/convert', method: 'POST', createdAt: new Date(mark.getTime() + 4) }),
      entry(me.userId, me.keyId, { createdAt: new Date(mark.getTime() + 5) }),
    ];
    await h.client.recordRequests({ entries: batch });
    const list = (f: Partial<auth.ListRequestsRequest>) =>
      h.client.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: me.userId, limit: 100, createdAfter: mark, ...f }));
    const ids = async (f: Partial<auth.ListRequestsRequest>) => (await list(f)).entries.map((e) => e.requestId);
    const [e404, e429, eMcp, e502, e200] = batch.map((b) => b.requestId);
    expect(await ids({})).toEqual([e200, e502, eMcp, e429, e404]);
    expect(await ids({ status: 4 })).toEqual([e429, e404]);
    expect(await ids({ status: 429 })).toEqual([e429]);
    expect(await ids({ status: 5 })).toEqual([e502]);
    expect(await ids({ route: '/api/v1/convert' })).toEqual([e502, e429]);
    expect(await ids({ tool: 'get_usage' })).toEqual([eMcp]);
    expect(await ids({ requestId: e429! })).toEqual([e429]);
    expect(await ids({ keyId: 'con_0123456789abcdefghijklmn' })).toEqual([eMcp]);
    expect(await ids({ createdAfter: new Date(mark.getTime() + 3), createdBefore: new Date(mark.getTime() + 5) })).toEqual([e502]);
    // Paging two at a time walks the same list.
    const walked: string[] = [];
    let cursor = '';
    for (;;) {
      const page = await list({ limit: 2, cursor });
      walked.push(...page.entries.map((e) => e.requestId));
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    expect(walked).toEqual([e200, e502, eMcp, e429, e404]);
    // A cursor is bound to its filters and its owner.
    const first = await list({ limit: 2 });
    expect((await failure(list({ limit: 2, cursor: first.nextCursor, status: 4 }))).param).toBe('cursor');
    expect((await failure(h.client.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: other.userId, limit: 2, cursor: first.nextCursor, keyId: '', createdAfter: mark })))).param).toBe('cursor');
  });

  it('never shows one user’s calls to another', async () => {
    await h.client.recordRequests({ entries: [entry(other.userId, other.keyId), entry(owner.userId, owner.keyId)] });
    const theirs = await h.client.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: other.userId, limit: 100, cursor: '', keyId: owner.keyId }));
    expect(theirs.entries).toEqual([]);
    const all = await h.client.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: other.userId, limit: 100, cursor: '', keyId: '' }));
    expect(all.entries.length).toBeGreaterThan(0);
    expect(all.entries.every((e) => e.ownerId === other.userId)).toBe(true);
  });

  it('drops whole days once they are past the 30 kept, and makes the coming days’ partitions', async () => {
    const old = entry(owner.userId, owner.keyId, { createdAt: new Date('2026-01-14T08:00:00.000Z') });
    await h.client.recordRequests({ entries: [old] });
    expect(await partitions()).toContain('request_log_20260114');
    // 31 days on, the 14th is entirely past the 30 days kept; the 15th is not yet.
    h.clock.set('2026-02-14T06:00:00.000Z');
    const listed = async () =>
      (await h.client.listRequests(auth.ListRequestsRequest.fromPartial({ ownerId: owner.userId, limit: 100, cursor: '', keyId: '' }))).entries.map(
        (e) => e.requestId,
      );
    // Past the 30 days it is no longer shown, even before its partition goes.
    expect(await listed()).not.toContain(old.requestId);
    const maintenance = new RequestLog(db, h.logs.log, h.clock, 'auth-test-cursor-secret-0123456789');
    expect((await maintenance.maintain()).dropped).toBeGreaterThanOrEqual(1);
    const names = await partitions();
    expect(names).not.toContain('request_log_20260114');
    expect(names).toEqual(expect.arrayContaining(['request_log_20260115', 'request_log_20260214', 'request_log_20260215', 'request_log_20260216']));
    expect(await db.query(`SELECT 1 FROM request_log WHERE request_id = $1`, [old.requestId])).toEqual([]);
  });
});
