/**
 * Issue #19: every RPC of every service × every kind of caller, over direct gRPC to the real
 * services, each cell asserting allow or deny with the gRPC status and ErrorInfo reason the
 * policy table implies. The expectation is this file's own reading of each rule (not the kit's
 * `decide`), so a wrong decision in the server shows up here; and the method list comes from the
 * generated service definitions, so an RPC without a rule fails here too (and in tsc, since the
 * table is typed by the definitions).
 *
 * "Allowed" means the call got past the access check: it answered OK, or failed in its handler
 * with a reason that is not one of the access check's (an empty request is often invalid). A
 * request naming another owner is refused not_found with the check's own message.
 */
import * as grpc from '@grpc/grpc-js';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { auth, billing, conversion, library, transcription } from '@murmur/proto';
import {
  RPC_RULES,
  WORKLOADS,
  workloadOfPath,
  type RpcRule,
  type Workload,
} from '@murmur/contract';
import {
  errorInfoOf,
  FOREIGN_OWNER_MESSAGE,
  newRequestId,
  PRINCIPAL_ASSERTION_HEADER,
  runWithContext,
  TokenMinter,
  WORKLOAD_TOKEN_HEADER,
} from '@murmur/kit';
import { handMadeJwt, testMinter, testSigningKey } from '@murmur/kit/testing';
import { startSystem, type TestSystem } from './support/system';

jest.setTimeout(180_000);

interface MethodDef {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestSerialize: (v: never) => Buffer;
  requestDeserialize: (b: Buffer) => unknown;
}

const DEFINITIONS: Record<string, MethodDef>[] = [
  auth.AuthServiceService,
  billing.BillingServiceService,
  library.LibraryServiceService,
  transcription.TranscriptionServiceService,
  conversion.ConversionServiceService,
] as unknown as Record<string, MethodDef>[];
const CHECK_PATH = '/envoy.service.auth.v3.Authorization/Check';

/** Every method served, from the generated definitions (and Envoy's Check, served by auth). */
const METHODS: MethodDef[] = [
  ...DEFINITIONS.flatMap((d) => Object.values(d)),
  { path: CHECK_PATH, requestStream: false, responseStream: false, requestSerialize: () => Buffer.alloc(0), requestDeserialize: () => ({}) },
];

/** The reasons of the access check itself: any other outcome means the call reached its handler. */
const ACCESS_REASONS = new Set(['missing_api_key', 'invalid_api_key', 'expired_api_key', 'invalid_credentials', 'permission_denied', 'insufficient_scope']);

/**
 * The RPCs that spend credits or change state for a developer, written out here (not read from
 * the rules' `scope`): a read-only key is refused each of them, and only them.
 */
const AI_RPCS = new Set([
  '/murmur.billing.v1.BillingService/AdmitAiRequest',
  '/murmur.transcription.v1.TranscriptionService/Transcribe',
  '/murmur.transcription.v1.TranscriptionService/SubmitTranscription',
  '/murmur.transcription.v1.TranscriptionService/StreamTranscription',
  '/murmur.transcription.v1.TranscriptionService/CancelTranscription',
  '/murmur.transcription.v1.TranscriptionService/RetryWebhook',
  '/murmur.conversion.v1.ConversionService/Convert',
  '/murmur.conversion.v1.ConversionService/Answer',
  '/murmur.library.v1.LibraryService/SetSpeakerNames',
  '/murmur.auth.v1.AuthService/CreateListenToken',
]);
const INSUFFICIENT_SCOPE: Outcome = { status: grpc.status.PERMISSION_DENIED, reason: 'insufficient_scope' };

type Outcome = 'allow' | { status: grpc.status; reason: string };

/** How a caller presents itself, and what it is as far as the policy goes. */
interface CallerCase {
  name: string;
  /** The owner the request names (through the rule's owner path); none by default. */
  owner?: () => string;
  metadata: (audience: Workload) => Promise<Record<string, string>>;
  /** This file's reading of the rule of the RPC at `path` for this caller. */
  expect: (rule: RpcRule, path: string) => Outcome;
}

const deny = (status: grpc.status, reason: string): Outcome => ({ status, reason });
const DENIED = deny(grpc.status.PERMISSION_DENIED, 'permission_denied');
const INVALID_CREDENTIALS = deny(grpc.status.UNAUTHENTICATED, 'invalid_credentials');

/** A JWT made by hand (forged, expired, wrongly typed), with node:crypto rather than the services' library. */
async function handMadeToken(key: KeyObject, header: Record<string, string>, claims: Record<string, unknown>): Promise<string> {
  return handMadeJwt(header, claims, key);
}

describe('who may call each RPC (direct gRPC, every service × every caller)', () => {
  let sys: TestSystem;
  const keys: Record<'a' | 'b' | 'expired' | 'revoked' | 'readOnly', string> = { a: '', b: '', expired: '', revoked: '', readOnly: '' };
  let userA = '';
  let userB = '';
  /** A live listen token of A's: the one call that gets past RedeemListenToken's check (the gateway's) spends it. */
  let listenToken = '';
  const channels = new Map<string, grpc.Client>();

  beforeAll(async () => {
    sys = await startSystem({ ai: true });
    const a = await sys.newUser('matrix-a@example.com');
    const b = await sys.newUser('matrix-b@example.com');
    userA = a.user.id;
    userB = b.user.id;
    keys.a = a.key;
    keys.b = b.key;
    const expiring = await sys.admin.auth.createApiKey({ userId: a.user.id, name: 'short', expiry: auth.KeyExpiry.KEY_EXPIRY_30_DAYS, scopes: [] });
    keys.expired = expiring.key;
    const revoked = await sys.admin.auth.createApiKey({ userId: a.user.id, name: 'gone', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: [] });
    await sys.admin.auth.revokeApiKey({ userId: a.user.id, keyId: revoked.apiKey!.id });
    keys.revoked = revoked.key;
    keys.readOnly = (await sys.admin.auth.createApiKey({ userId: a.user.id, name: 'reader', expiry: auth.KeyExpiry.KEY_EXPIRY_90_DAYS, scopes: ['read'] })).key;
    // 31 days on: the 30-day key has expired, A's and B's 90-day keys have not.
    sys.authClock.advance(31 * 24 * 3600 * 1000);
    listenToken = (
      await runWithContext({ requestId: newRequestId(), principal: { userId: a.user.id, keyId: a.keyId } }, () =>
        sys.clients.auth.createListenToken({ userId: a.user.id, keyId: a.keyId, scopes: [] }),
      )
    ).token;
    const addressOf: Record<Workload, string> = {
      auth: sys.addresses.AUTH_ADDR,
      billing: sys.addresses.BILLING_ADDR,
      library: sys.addresses.LIBRARY_ADDR,
      transcription: sys.addresses.TRANSCRIPTION_ADDR,
      conversion: sys.addresses.CONVERSION_ADDR,
      gateway: '',
      app: '',
    };
    for (const w of ['auth', 'billing', 'library', 'transcription', 'conversion'] as const) {
      channels.set(w, new grpc.Client(addressOf[w], grpc.credentials.createInsecure()));
    }
  });
  afterAll(async () => {
    for (const c of channels.values()) c.close();
    await sys?.stop();
  });

  /** Read at call time: the keys exist only after beforeAll. */
  const bearer = (which: keyof typeof keys) => async () => ({ authorization: `Bearer ${keys[which]}` });
  const userOutcome = (reasonIfDenied?: string) => (rule: RpcRule): Outcome => {
    if (rule.anyone) return 'allow';
    if (reasonIfDenied) return deny(grpc.status.UNAUTHENTICATED, reasonIfDenied);
    return rule.user ? 'allow' : DENIED;
  };
  const workloadOutcome = (w: Workload, admin: boolean) => (rule: RpcRule): Outcome =>
    rule.anyone || rule.workloads?.includes(w) || (admin && rule.admin) ? 'allow' : DENIED;
  const assertionFor = (user: () => string, scopes?: string[]) => async (audience: Workload) => ({
    [PRINCIPAL_ASSERTION_HEADER]: await testMinter('gateway').principalAssertion(audience, { userId: user(), keyId: 'key_matrix', scopes }),
  });
  /** A read-only key's (or its assertion's) reading: a user's, but refused every AI RPC. */
  const readOnlyOutcome = (rule: RpcRule, path: string): Outcome => (rule.user && AI_RPCS.has(path) ? INSUFFICIENT_SCOPE : userOutcome()(rule));

  const stranger: KeyObject = generateKeyPairSync('ed25519').privateKey;
  const now = () => Math.floor(Date.now() / 1000);

  const CALLERS: CallerCase[] = [
    { name: 'no credentials', metadata: async () => ({}), expect: (rule) => (rule.anyone ? 'allow' : deny(grpc.status.UNAUTHENTICATED, 'missing_api_key')) },
    { name: "user A's key", metadata: bearer('a'), expect: userOutcome() },
    { name: "user B's key", metadata: bearer('b'), expect: userOutcome() },
    {
      name: "user A's key, the request naming user B as the owner",
      metadata: bearer('a'),
      owner: () => userB,
      expect: (rule) => (rule.anyone ? 'allow' : !rule.user ? DENIED : rule.user.owner ? deny(grpc.status.NOT_FOUND, 'not_found') : 'allow'),
    },
    {
      name: "the gateway's assertion for user A, the request naming user B as the owner",
      metadata: assertionFor(() => userA),
      owner: () => userB,
      expect: (rule) => (rule.anyone ? 'allow' : !rule.user ? DENIED : rule.user.owner ? deny(grpc.status.NOT_FOUND, 'not_found') : 'allow'),
    },
    { name: 'an expired key', metadata: bearer('expired'), expect: userOutcome('expired_api_key') },
    { name: 'a revoked key', metadata: bearer('revoked'), expect: userOutcome('invalid_api_key') },
    { name: 'a malformed key', metadata: async () => ({ authorization: 'Bearer svc_nothex' }), expect: userOutcome('invalid_api_key') },
    { name: "the gateway's assertion for user A", metadata: assertionFor(() => userA), expect: userOutcome() },
    { name: "user A's read-only key", metadata: bearer('readOnly'), expect: readOnlyOutcome },
    { name: "the gateway's assertion for user A's read-only key", metadata: assertionFor(() => userA, ['read']), expect: readOnlyOutcome },
    { name: "the gateway's assertion for user A's full-access key", metadata: assertionFor(() => userA, ['read', 'ai']), expect: userOutcome() },
    {
      name: 'a forged assertion (unknown key)',
      metadata: async (aud) => ({
        [PRINCIPAL_ASSERTION_HEADER]: await handMadeToken(stranger, { typ: 'murmur-principal+jwt', kid: 'gateway' }, { iss: 'gateway', sub: userA, key: 'k', aud, iat: now(), exp: now() + 30 }),
      }),
      expect: (rule) => (rule.anyone ? 'allow' : INVALID_CREDENTIALS),
    },
    {
      name: 'an expired assertion',
      metadata: async (aud) => ({
        [PRINCIPAL_ASSERTION_HEADER]: await handMadeToken(testSigningKey('gateway').key, { typ: 'murmur-principal+jwt', kid: 'gateway' }, {
          iss: 'gateway', sub: userA, key: 'k', aud, iat: now() - 120, exp: now() - 90,
        }),
      }),
      expect: (rule) => (rule.anyone ? 'allow' : INVALID_CREDENTIALS),
    },
    {
      name: 'an assertion for another service',
      metadata: async (aud) => ({
        [PRINCIPAL_ASSERTION_HEADER]: await testMinter('gateway').principalAssertion(aud === 'library' ? 'billing' : 'library', { userId: userA, keyId: 'k' }),
      }),
      expect: (rule) => (rule.anyone ? 'allow' : INVALID_CREDENTIALS),
    },
    {
      name: 'an assertion issued by a workload that may not vouch for users (conversion)',
      metadata: async (aud) => ({
        [PRINCIPAL_ASSERTION_HEADER]: await handMadeToken(testSigningKey('conversion').key, { typ: 'murmur-principal+jwt', kid: 'conversion' }, {
          iss: 'conversion', sub: userA, key: 'k', aud, iat: now(), exp: now() + 30,
        }),
      }),
      expect: (rule) => (rule.anyone ? 'allow' : INVALID_CREDENTIALS),
    },
    {
      name: 'a forged workload token (claims gateway, unknown key)',
      metadata: async (aud) => ({
        [WORKLOAD_TOKEN_HEADER]: await handMadeToken(stranger, { typ: 'murmur-workload+jwt', kid: 'gateway' }, { iss: 'gateway', sub: 'gateway', aud, iat: now(), exp: now() + 300 }),
      }),
      expect: (rule) => (rule.anyone ? 'allow' : INVALID_CREDENTIALS),
    },
    {
      name: 'a workload token claiming admin for the gateway',
      metadata: async (aud) => ({
        [WORKLOAD_TOKEN_HEADER]: await handMadeToken(testSigningKey('gateway').key, { typ: 'murmur-workload+jwt', kid: 'gateway' }, {
          iss: 'gateway', sub: 'gateway', aud, roles: ['admin'], iat: now(), exp: now() + 300,
        }),
      }),
      expect: (rule) => (rule.anyone ? 'allow' : INVALID_CREDENTIALS),
    },
    ...WORKLOADS.map<CallerCase>((w) => ({
      name: `workload ${w}${w === 'app' ? ' (admin role)' : ''}`,
      metadata: async (aud) => ({ [WORKLOAD_TOKEN_HEADER]: await testMinter(w).workloadToken(aud) }),
      expect: workloadOutcome(w, w === 'app'),
    })),
    {
      name: 'workload app without the admin role',
      metadata: async (aud) => ({ [WORKLOAD_TOKEN_HEADER]: await new TokenMinter(testSigningKey('app'), []).workloadToken(aud) }),
      expect: workloadOutcome('app', false),
    },
  ];
  /**
   * Sets `owner` where the rule's owner path points, written out here by hand from the .proto
   * files (not with the kit's bindOwner): a rule whose path names no real field then acts on the
   * caller's own data and the "naming user B" rows fail.
   */
  function nameOwner(request: Record<string, unknown>, path: string, owner: string): void {
    switch (path) {
      case 'ownerId':
      case 'userId':
        request[path] = owner;
        return;
      case 'lookup:userId':
        request.lookup = { $case: 'userId', value: owner };
        return;
      default:
        throw new Error(`the matrix does not know the owner path ${path}: add it`);
    }
  }

  /** An empty request of the method (every field at its default), except where an empty one would be ambiguous. */
  function requestOf(def: MethodDef, owner?: string): Buffer {
    if (def.path === '/murmur.auth.v1.AuthService/VerifyKey') {
      // Its handler answers missing_api_key for an empty key, like the access check: send a valid one.
      return def.requestSerialize({ authorization: `Bearer ${keys.a}` } as never);
    }
    if (def.path === '/murmur.auth.v1.AuthService/RedeemListenToken') {
      // Its handler answers invalid_api_key for an unknown token, like the access check: send a real one.
      return def.requestSerialize({ token: listenToken } as never);
    }
    const request = def.requestDeserialize(Buffer.alloc(0)) as Record<string, unknown>;
    const path = RPC_RULES.get(def.path)?.user?.owner;
    if (owner && path) nameOwner(request, path, owner);
    return def.requestSerialize(request as never);
  }

  async function call(def: MethodDef, md: Record<string, string>, owner?: string): Promise<Outcome> {
    const workload = workloadOfPath(def.path)!;
    const client = channels.get(workload)!;
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(md)) metadata.set(k, v);
    const options = { deadline: Date.now() + 20_000 };
    const settle = (resolve: (o: Outcome) => void) => (err: grpc.ServiceError | null) => {
      if (!err) return resolve('allow');
      const reason = errorInfoOf(err)?.reason ?? `(no ErrorInfo: ${err.code} ${err.details})`;
      const refusedOwner = reason === 'not_found' && err.details === FOREIGN_OWNER_MESSAGE;
      resolve(ACCESS_REASONS.has(reason) || refusedOwner ? { status: err.code, reason } : 'allow');
    };
    const raw = (b: Buffer) => b;
    return new Promise((resolve) => {
      if (def.requestStream) {
        const stream = client.makeClientStreamRequest(def.path, raw, raw, metadata, options, settle(resolve));
        // The opening message (config), then the end: past the access check it fails as missing audio.
        const config = transcription.TranscribeConfig.fromPartial({ userId: owner ?? '' });
        stream.write(Buffer.from(transcription.TranscribeRequest.encode({ payload: { $case: 'config', value: config } }).finish()));
        stream.end();
      } else if (def.responseStream) {
        // A server stream: its first message, or its end, means the call got past the check.
        const stream = client.makeServerStreamRequest(def.path, raw, raw, requestOf(def, owner), metadata, options);
        stream.on('data', () => {
          stream.cancel();
          resolve('allow');
        });
        stream.on('error', (err: grpc.ServiceError) => settle(resolve)(err));
        stream.on('end', () => resolve('allow'));
      } else {
        client.makeUnaryRequest(def.path, raw, raw, requestOf(def, owner), metadata, options, settle(resolve));
      }
    });
  }

  it('a refused Transcribe that goes on streaming audio hears its refusal, not a failed write', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${keys.revoked}`);
    const raw = (b: Buffer) => b;
    const client = channels.get('transcription')!;
    const err = await new Promise<grpc.ServiceError | null>((resolve) => {
      const stream = client.makeClientStreamRequest('/murmur.transcription.v1.TranscriptionService/Transcribe', raw, raw, metadata, { deadline: Date.now() + 20_000 }, resolve);
      const chunk = Buffer.from(transcription.TranscribeRequest.encode({ payload: { $case: 'audioChunk', value: Buffer.alloc(64 * 1024, 7) } }).finish());
      stream.write(Buffer.from(transcription.TranscribeRequest.encode({ payload: { $case: 'config', value: transcription.TranscribeConfig.fromPartial({}) } }).finish()));
      let sent = 0;
      const pump = () => {
        while (sent < 64) {
          sent += 1;
          if (!stream.write(chunk)) return void stream.once('drain', pump);
        }
        stream.end();
      };
      pump();
    });
    expect(err?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(errorInfoOf(err!)?.reason).toBe('invalid_api_key');
  });

  it('has a rule for every RPC served, and no rule for an RPC that does not exist', () => {
    const served = METHODS.map((m) => m.path).sort();
    expect(served.filter((p) => !RPC_RULES.has(p))).toEqual([]);
    expect([...RPC_RULES.keys()].filter((p) => !served.includes(p))).toEqual([]);
  });

  it.each(CALLERS.map((c) => [c.name, c] as const))('%s: every RPC is allowed or refused as the policy says', async (_name, caller) => {
    const mismatches: string[] = [];
    for (const def of METHODS) {
      const rule = RPC_RULES.get(def.path)!;
      const want = caller.expect(rule, def.path);
      const got = await call(def, await caller.metadata(workloadOfPath(def.path)!), caller.owner?.());
      if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push(`${def.path}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    }
    expect(mismatches).toEqual([]);
  });
});
