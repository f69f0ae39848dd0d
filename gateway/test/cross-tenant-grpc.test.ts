/**
 * Issue #19, "cross-tenant reads over direct gRPC: 0": an internal team holding user A's key
 * calls the services directly (no gateway, no Envoy), as the docs tell them to, and tries every
 * way of reaching user B's data — B's owner id in the request, B's ids for the Get RPCs, no owner
 * at all. Every answer is A's own data or `not_found`; the test counts what of B's it saw.
 * The same through the gateway's principal assertion for A.
 */
import { auth, billing, library } from '@murmur/proto';
import { MurmurError } from '@murmur/contract';
import { createClient, PRINCIPAL_ASSERTION_HEADER, runWithContext, newRequestId, type PromiseClient } from '@murmur/kit';
import { testMinter } from '@murmur/kit/testing';
import { seedLibrary } from '@murmur/app';
import { startSystem, type TestSystem } from './support/system';

interface Direct {
  auth: PromiseClient<auth.AuthServiceClient>;
  billing: PromiseClient<billing.BillingServiceClient>;
  library: PromiseClient<library.LibraryServiceClient>;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'answered';
  } catch (err) {
    if (err instanceof MurmurError) return err.code;
    throw err;
  }
}

describe('cross-tenant reads over direct gRPC', () => {
  let sys: TestSystem;
  let direct: Direct;
  let a: { id: string; key: string };
  let b: { id: string; key: string };
  /** B's ids, as an attacker who learnt them would use them. */
  const bIds = { recording: '', thread: '', folder: '' };

  beforeAll(async () => {
    sys = await startSystem();
    const ua = await sys.newUser('tenant-a@example.com');
    const ub = await sys.newUser('tenant-b@example.com');
    a = { id: ua.user.id, key: ua.key };
    b = { id: ub.user.id, key: ub.key };
    await seedLibrary(sys.admin.library, a.id, { recordings: 8, seed: 11 });
    await seedLibrary(sys.admin.library, b.id, { recordings: 8, seed: 12 });
    // B's data is in use too: a ledger entry and a credit grant.
    await sys.admin.billing.grantPrepaidCredits({ userId: b.id, credits: 40, note: 'cross-tenant test' });
    bIds.recording = (await sys.admin.library.listRecordings(library.ListRecordingsRequest.fromPartial({ ownerId: b.id, page: { limit: 1 } }))).recordings[0]!.id;
    bIds.thread = (await sys.admin.library.listThoughtThreads({ ownerId: b.id, page: { limit: 1, cursor: '' } })).threads[0]!.id;
    bIds.folder = (await sys.admin.library.listFolders({ ownerId: b.id, page: { limit: 1, cursor: '' } })).folders[0]!.id;
    // An internal team's clients: no workload identity of ours, just the address.
    direct = {
      auth: createClient(auth.AuthServiceClient, sys.addresses.AUTH_ADDR),
      billing: createClient(billing.BillingServiceClient, sys.addresses.BILLING_ADDR),
      library: createClient(library.LibraryServiceClient, sys.addresses.LIBRARY_ADDR),
    };
  });
  afterAll(async () => {
    for (const c of Object.values(direct ?? {})) c.close();
    await sys?.stop();
  });

  const withKey = (key: string) => ({ metadata: { authorization: `Bearer ${key}` } });

  it("with A's key and no owner, every list and read answers A's data only", async () => {
    const o = withKey(a.key);
    const recordings = (await direct.library.listRecordings(library.ListRecordingsRequest.fromPartial({ page: { limit: 100 } }), o)).recordings;
    const threads = (await direct.library.listThoughtThreads({ ownerId: '', page: { limit: 100, cursor: '' } }, o)).threads;
    const folders = (await direct.library.listFolders({ ownerId: '', page: { limit: 100, cursor: '' } }, o)).folders;
    const kbs = (await direct.library.listKnowledgeBases({ ownerId: '', page: { limit: 100, cursor: '' } }, o)).knowledgeBases;
    const owners = [...recordings, ...threads, ...folders, ...kbs].map((x) => x.ownerId);
    expect(recordings).toHaveLength(8);
    expect(owners.length).toBeGreaterThan(8);
    expect(owners.filter((id) => id !== a.id)).toEqual([]);
    expect((await direct.auth.getUser({ lookup: undefined }, o)).user?.id).toBe(a.id);
    expect((await direct.billing.getUsage({ userId: '' }, o)).usage?.prepaidCreditsRemaining).toBe(0);
    const ledger = (await direct.billing.listLedgerEntries({ userId: '', pageSize: 100, pageToken: '' }, o)).entries;
    expect(ledger.filter((e) => e.userId !== a.id)).toEqual([]);
  });

  it("with A's key, B's owner id or B's ids answer not_found on every RPC that reads a user's data", async () => {
    const o = withKey(a.key);
    const attempts: Record<string, () => Promise<unknown>> = {
      ListRecordings: () => direct.library.listRecordings(library.ListRecordingsRequest.fromPartial({ ownerId: b.id, page: { limit: 100 } }), o),
      'GetRecording (B owner)': () => direct.library.getRecording({ ownerId: b.id, recordingId: bIds.recording }, o),
      "GetRecording (B's id, no owner)": () => direct.library.getRecording({ ownerId: '', recordingId: bIds.recording }, o),
      ListThoughtThreads: () => direct.library.listThoughtThreads({ ownerId: b.id, page: { limit: 100, cursor: '' } }, o),
      "GetThoughtThread (B's id)": () => direct.library.getThoughtThread({ ownerId: '', threadId: bIds.thread }, o),
      ListFolders: () => direct.library.listFolders({ ownerId: b.id, page: { limit: 100, cursor: '' } }, o),
      "GetFolder (B's id)": () => direct.library.getFolder({ ownerId: '', folderId: bIds.folder }, o),
      ListKnowledgeBases: () => direct.library.listKnowledgeBases({ ownerId: b.id, page: { limit: 100, cursor: '' } }, o),
      GetLibraryStats: () => direct.library.getLibraryStats({ ownerId: b.id }, o),
      GetUser: () => direct.auth.getUser({ lookup: { $case: 'userId', value: b.id } }, o),
      GetUsage: () => direct.billing.getUsage({ userId: b.id }, o),
      GetRateLimit: () => direct.billing.getRateLimit({ userId: b.id }, o),
      ListLedgerEntries: () => direct.billing.listLedgerEntries({ userId: b.id, pageSize: 100, pageToken: '' }, o),
    };
    const outcomes: Record<string, string> = {};
    for (const [name, attempt] of Object.entries(attempts)) outcomes[name] = await refusal(attempt());
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(attempts).map((k) => [k, 'not_found'])));
  });

  it("with A's key, the admin and service-to-service RPCs that would touch B are refused", async () => {
    const o = withKey(a.key);
    const outcomes = {
      CreateApiKey: await refusal(direct.auth.createApiKey({ userId: b.id, name: 'x', expiry: auth.KeyExpiry.KEY_EXPIRY_30_DAYS, scopes: [] }, o)),
      ListApiKeys: await refusal(direct.auth.listApiKeys({ userId: b.id }, o)),
      GrantPrepaidCredits: await refusal(direct.billing.grantPrepaidCredits({ userId: a.id, credits: 1_000_000, note: 'self-grant' }, o)),
      ChangePlan: await refusal(direct.billing.changePlan({ userId: a.id, planId: 'business' }, o)),
      Reserve: await refusal(direct.billing.reserve(billing.ReserveRequest.fromPartial({ userId: b.id, operation: billing.Operation.OPERATION_CONVERT, credits: 1, idempotencyKey: 'r' }), o)),
      CreateFolder: await refusal(direct.library.createFolder({ ownerId: b.id, name: 'planted', createdAt: undefined }, o)),
      ExtendReservation: await refusal(direct.billing.extendReservation({ userId: a.id, reservationId: 'rsv_0', audioSeconds: 60, maxAudioSeconds: 0 }, o)),
      DeleteRecording: await refusal(direct.library.deleteRecording({ ownerId: a.id, recordingId: bIds.recording }, o)),
    };
    expect(outcomes).toEqual({
      CreateApiKey: 'permission_denied',
      ListApiKeys: 'permission_denied',
      GrantPrepaidCredits: 'permission_denied',
      ChangePlan: 'permission_denied',
      Reserve: 'permission_denied',
      CreateFolder: 'permission_denied',
      ExtendReservation: 'permission_denied',
      DeleteRecording: 'permission_denied',
    });
    expect((await sys.admin.billing.getUsage({ userId: a.id })).usage?.prepaidCreditsRemaining).toBe(0);
  });

  it("with A's own key, a recording cannot be stored directly: only paid transcription makes one (issue #30)", async () => {
    const o = withKey(a.key);
    const before = (await sys.admin.library.getLibraryStats({ ownerId: a.id })).recordings;
    // A 3.15-million-character transcript stored at no charge was the finding.
    const text = 'free words '.repeat(10_000);
    const request = { ownerId: a.id, title: 'free storage', folderId: '', durationSeconds: 1, transcript: { text, language: 'en', segments: [] }, createdAt: undefined, recordingId: '' };
    expect(await refusal(direct.library.createRecording(request, o))).toBe('permission_denied');
    expect(await refusal(direct.library.createRecording({ ...request, ownerId: '' }, o))).toBe('permission_denied');
    expect((await sys.admin.library.getLibraryStats({ ownerId: a.id })).recordings).toBe(before);
  });

  it("through the gateway's principal assertion for A, B's data is as unreachable", async () => {
    // What the gateway's clients send for a request of A: its workload token and an assertion for A.
    const gateway = createClient(library.LibraryServiceClient, sys.addresses.LIBRARY_ADDR, { identity: testMinter('gateway') });
    try {
      await runWithContext({ requestId: newRequestId(), principal: { userId: a.id, keyId: 'key_a' } }, async () => {
        const own = await gateway.listRecordings(library.ListRecordingsRequest.fromPartial({ page: { limit: 100 } }));
        expect(own.recordings.filter((r) => r.ownerId !== a.id)).toEqual([]);
        expect(await refusal(gateway.getRecording({ ownerId: b.id, recordingId: bIds.recording }))).toBe('not_found');
        expect(await refusal(gateway.getRecording({ ownerId: '', recordingId: bIds.recording }))).toBe('not_found');
      });
      // Without a user in context, the gateway's workload alone reads nobody's library.
      const err = await gateway.listRecordings(library.ListRecordingsRequest.fromPartial({ ownerId: b.id, page: { limit: 1 } })).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/refused this workload's credentials \(permission_denied\)/);
    } finally {
      gateway.close();
    }
  });

  it("a client sending its own x-murmur-principal for B gets nothing of B's", async () => {
    const forged = await refusal(
      direct.library.listRecordings(
        library.ListRecordingsRequest.fromPartial({ ownerId: b.id, page: { limit: 100 } }),
        { metadata: { [PRINCIPAL_ASSERTION_HEADER]: `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ sub: b.id })).toString('base64url')}.` } },
      ),
    );
    expect(forged).toBe('invalid_credentials');
  });
});
